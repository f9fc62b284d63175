export { up, upOptionsFromEnv, type Running, type UpOptions } from './up';
export { startDemoSystem, takeSseData, type DemoSystem } from './testing';
export { MAX_BATCH_BYTES } from './load';
