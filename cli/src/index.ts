export { up, upOptionsFromEnv, type Running, type UpOptions } from './up';
export { startDemoSystem, type DemoSystem } from './testing';
