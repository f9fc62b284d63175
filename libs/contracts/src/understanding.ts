import { z } from 'zod';
import { SiteName } from './item';

/**
 * What askbus learns of a site when its items are loaded (its profile) and what it makes of a
 * question against that profile (its understanding). Both cross service boundaries: the
 * retriever serves profiles, the router parses questions, the retriever applies the
 * constraints, the rankers and tools read them.
 */

/** What kind of values a property holds, decided from the values themselves. */
export const PropertyKind = z.enum(['number', 'date', 'enum', 'text', 'name']);
export type PropertyKind = z.infer<typeof PropertyKind>;

/** A value of an enumeration with how many items carry it. */
export const ValueCount = z.object({ value: z.string(), count: z.number().int().nonnegative() });
export type ValueCount = z.infer<typeof ValueCount>;

export const PropertyProfile = z.object({
  /** Where the value is: `weight`, `vehicleEngine.enginePower`, `additionalProperty.body mass`. */
  path: z.string().min(1).max(300),
  /** The property's own words, lowercase: "engine power", "body mass", "home team". */
  label: z.string().max(300),
  /** Words of the objects around it ("vehicle engine"), which also describe it. */
  context: z.string().max(300).default(''),
  kind: PropertyKind,
  /** Items that carry it. */
  count: z.number().int().nonnegative(),
  /** Canonical unit of its numbers (`lb`, `hp`, `g`, `min`, `USD`, `%`), when they have one. */
  unit: z.string().max(40).optional(),
  /** The unit the site writes its numbers in (`lb`, `s`), for reading bare numbers and showing values. */
  displayUnit: z.string().max(40).optional(),
  /** The unit's dimension (`mass`, `length`, `time`, `money`, `rating`, …). */
  dimension: z.string().max(40).optional(),
  /** Numbers and dates (dates as fractional years): smallest, largest and 11 quantiles (0, 10 … 100 %). */
  min: z.number().optional(),
  max: z.number().optional(),
  quantiles: z.array(z.number()).max(11).optional(),
  /** Whether every value is a whole number (counts, years). */
  integer: z.boolean().optional(),
  /** Enumerations and names: the most common values with their counts (capped). */
  values: z.array(ValueCount).max(5_000).optional(),
  /** Distinct values in all (may exceed `values.length`). */
  distinct: z.number().int().nonnegative().optional(),
});
export type PropertyProfile = z.infer<typeof PropertyProfile>;

export const TypeCount = z.object({ type: z.string(), count: z.number().int().nonnegative() });

export const SiteProfile = z.object({
  site: SiteName,
  /** Changes whenever the site's items change; lets callers cache a profile. */
  version: z.string().max(100),
  itemCount: z.number().int().nonnegative(),
  /** Every `@type` with its count, most common first. */
  types: z.array(TypeCount),
  /** The types the site is about (page furniture such as WebSite or BreadcrumbList left out). */
  mainTypes: z.array(z.string()),
  properties: z.array(PropertyProfile),
  /** Words in so many items' text that they describe the whole site ("penguin" on a penguin site). */
  siteWords: z.array(z.string()).max(200).default([]),
});
export type SiteProfile = z.infer<typeof SiteProfile>;

/** A quantity computed from two numeric properties of the same unit: gross − budget, home + away score. */
export const Derived = z.object({
  /** a − b, a + b, a ÷ b, or |a − b| (how far apart). */
  op: z.enum(['difference', 'sum', 'ratio', 'gap']),
  a: z.string(),
  b: z.string(),
  /** What it is, for people: "profit (worldwide gross − production budget)", "total score". */
  label: z.string().max(200),
  unit: z.string().max(40).optional(),
});
export type Derived = z.infer<typeof Derived>;

/** Where a number comes from: one property, or a quantity derived from two. */
export const Target = z.union([z.object({ path: z.string() }), z.object({ derived: Derived })]);
export type Target = z.infer<typeof Target>;

const ConstraintBase = {
  /** The question's own words it came from. */
  phrase: z.string().max(300),
  /** How it reads to people: "8 cylinders", "released 1970–1973", "heavier than 6,000 g". */
  text: z.string().max(300),
  /** How sure the parser is (0..1); the least sure constraint is relaxed first. */
  confidence: z.number().min(0).max(1).default(1),
};

/** A number (or date as fractional year) within bounds; a bound left out is open. */
export const RangeConstraint = z.object({
  kind: z.literal('range'),
  target: Target,
  min: z.number().optional(),
  max: z.number().optional(),
  /** Whether a bound itself satisfies the constraint ("at least 30" vs "more than 30"). */
  minInclusive: z.boolean().default(true),
  maxInclusive: z.boolean().default(true),
  ...ConstraintBase,
});
export type RangeConstraint = z.infer<typeof RangeConstraint>;

/**
 * One of some values of a property: exact values (folded to lowercase) or word sequences a
 * value must contain ("comedy" matches "Romantic Comedy"; "alaska" matches "12km SW of Kodiak, Alaska").
 */
export const ValueConstraint = z.object({
  kind: z.literal('value'),
  path: z.string(),
  values: z.array(z.string().max(300)).max(200).default([]),
  contains: z
    .array(z.array(z.string().max(100)).max(12))
    .max(50)
    .default([]),
  negated: z.boolean().default(false),
  ...ConstraintBase,
});
export type ValueConstraint = z.infer<typeof ValueConstraint>;

export const Constraint = z.discriminatedUnion('kind', [RangeConstraint, ValueConstraint]);
export type Constraint = z.infer<typeof Constraint>;

/**
 * An order the question asks for: a superlative ("the heaviest": `sort`) or a preference an
 * adjective expresses without a bound ("heavy cars", "low budget": `prefer`).
 */
export const Order = z.object({
  target: Target,
  direction: z.enum(['asc', 'desc']),
  strength: z.enum(['sort', 'prefer']),
  phrase: z.string().max(300),
  text: z.string().max(300),
  /** The target's quantiles on the site (11 values), so any service can place a value without the profile. */
  quantiles: z.array(z.number()).max(11).optional(),
});
export type Order = z.infer<typeof Order>;

/** An item the question names. */
export const NamedItem = z.object({
  /** The words of the question that name it. */
  phrase: z.string().max(500),
  url: z.string(),
  name: z.string(),
  site: z.string(),
  type: z.string().optional(),
  /** The question names it exactly (not a longer title that merely contains those words). */
  exact: z.boolean().default(true),
});
export type NamedItem = z.infer<typeof NamedItem>;

/** A question as structure: free words, constraints, orders, named items and what it asks for. */
export const Understanding = z.object({
  /** The question as asked. */
  text: z.string().max(10_000),
  /** The words not taken by any constraint, order, type or named item (for text search). */
  freeText: z.string().max(10_000).default(''),
  /** Item types the question names ("cars" → Car). */
  types: z.array(z.string()).max(20).default([]),
  constraints: z.array(Constraint).max(30).default([]),
  orders: z.array(Order).max(10).default([]),
  named: z.array(NamedItem).max(10).default([]),
  /** What the question asks for: a list, one item's details, or two items side by side. */
  intent: z.enum(['search', 'details', 'compare']).default('search'),
  /** Property paths the question asks about (details, comparison aspects, constrained properties). */
  asked: z.array(z.string()).max(30).default([]),
  /** The noun for the items, as the question or the site says it ("cars", "penguins"). */
  noun: z.string().max(100).default(''),
  /** Who produced it: the local parser or a language model (validated against the profile). */
  source: z.enum(['local', 'llm']).default('local'),
});
export type Understanding = z.infer<typeof Understanding>;
export type UnderstandingInput = z.input<typeof Understanding>;

/** What the retriever did with a search's constraints. */
export const SearchOutcome = z.object({
  /** Items that satisfied the constraints kept (before `numResults` was applied). */
  matched: z.number().int().nonnegative(),
  /** Constraints dropped because together they excluded every item, weakest first. */
  relaxed: z.array(z.string().max(300)).default([]),
  /** The question's orders with the quantiles of derived quantities filled in from the items (for rankers to place items the same way). */
  orders: z.array(Order).max(10).optional(),
});
export type SearchOutcome = z.infer<typeof SearchOutcome>;

/** A stretch of a question that is an item's name (character offsets into the question). */
export const NameMatch = z.object({
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
  /** The item names equal the words exactly (else they only start with them). */
  exact: z.boolean(),
  /** The name is one common word ("Big", "Heat"): trust it only with more evidence. */
  common: z.boolean(),
  items: z
    .array(
      z.object({
        url: z.string(),
        name: z.string(),
        site: z.string(),
        type: z.string(),
        /** The item's year, when it has a date (to tell apart items of one name). */
        year: z.number().optional(),
      }),
    )
    .max(20),
});
export type NameMatch = z.infer<typeof NameMatch>;

export const ProfileRequest = z.object({
  site: z.array(z.union([SiteName, z.literal('all')])).min(1),
  /** Versions the caller has: those profiles come back as `{ site, version, unchanged: true }`. */
  known: z.record(z.string(), z.string()).default({}),
});
export const ProfileReply = z.object({
  profiles: z.array(
    z.union([SiteProfile, z.object({ site: SiteName, version: z.string(), unchanged: z.literal(true) })]),
  ),
});

export const NamesRequest = z.object({
  site: z.array(z.union([SiteName, z.literal('all')])).min(1),
  text: z.string().min(1).max(2_000),
});
export const NamesReply = z.object({ matches: z.array(NameMatch).max(50) });
