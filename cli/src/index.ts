export { up, upOptionsFromEnv, type Running, type UpOptions } from './up';
