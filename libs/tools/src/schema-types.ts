/**
 * A slice of the real schema.org type hierarchy (https://schema.org/docs/full.html), each type
 * with its first parent. Where schema.org gives a type several parents (LocalBusiness is both an
 * Organization and a Place) the first listed on schema.org is kept, so ancestry is one chain.
 * NLWeb's `Item` is taken as another name for Thing.
 */
export const SCHEMA_PARENTS: Readonly<Record<string, string>> = {
  CreativeWork: 'Thing',
  Organization: 'Thing',
  Person: 'Thing',
  Place: 'Thing',
  Product: 'Thing',
  Event: 'Thing',
  Intangible: 'Thing',
  Action: 'Thing',
  Movie: 'CreativeWork',
  TVSeries: 'CreativeWork',
  Book: 'CreativeWork',
  Article: 'CreativeWork',
  NewsArticle: 'Article',
  BlogPosting: 'Article',
  HowTo: 'CreativeWork',
  Recipe: 'HowTo',
  MusicRecording: 'CreativeWork',
  MusicAlbum: 'CreativeWork',
  CreativeWorkSeries: 'CreativeWork',
  PodcastSeries: 'CreativeWorkSeries',
  Episode: 'CreativeWork',
  PodcastEpisode: 'Episode',
  WebSite: 'CreativeWork',
  Dataset: 'CreativeWork',
  Vehicle: 'Product',
  Car: 'Vehicle',
  Motorcycle: 'Vehicle',
  IndividualProduct: 'Product',
  ProductModel: 'Product',
  LocalBusiness: 'Organization',
  FoodEstablishment: 'LocalBusiness',
  Restaurant: 'FoodEstablishment',
  CafeOrCoffeeShop: 'FoodEstablishment',
  Bakery: 'FoodEstablishment',
  BarOrPub: 'FoodEstablishment',
  LodgingBusiness: 'LocalBusiness',
  Hotel: 'LodgingBusiness',
  Store: 'LocalBusiness',
  Corporation: 'Organization',
  TouristAttraction: 'Place',
  Landmark: 'Place',
  MusicEvent: 'Event',
  SportsEvent: 'Event',
  Statistics: 'Intangible',
  StatisticalPopulation: 'Intangible',
};

/** Names that mean another type (NLWeb's catch-all `Item` is schema.org's Thing). */
export const TYPE_ALIASES: Readonly<Record<string, string>> = { Item: 'Thing' };

export function canonicalType(type: string): string {
  return Object.hasOwn(TYPE_ALIASES, type) ? TYPE_ALIASES[type]! : type;
}

export function isKnownType(type: string): boolean {
  const t = canonicalType(type);
  return t === 'Thing' || Object.hasOwn(SCHEMA_PARENTS, t);
}

/** The type and its ancestors, most specific first, ending at Thing (unknown types: [type, Thing]). */
export function ancestry(type: string): string[] {
  const chain = [canonicalType(type)];
  for (let t = chain[0]!; t !== 'Thing';) {
    const parent = Object.hasOwn(SCHEMA_PARENTS, t) ? SCHEMA_PARENTS[t]! : 'Thing';
    chain.push(parent);
    t = parent;
  }
  return chain;
}
