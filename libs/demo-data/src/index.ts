export {
  convertMovies,
  movieTitle,
  parseReleaseDate,
  MovieRecord,
  MOVIES_SITE,
  type Conversion,
} from './movies';
export { convertCars, parseCarName, CarRecord, CARS_SITE } from './cars';
export { loadDemoSites, readVegaDataset, vegaDatasetPath, type DemoSite } from './load';
export { repairMojibake, slugify } from './text';
