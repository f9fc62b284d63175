export * from './items';
export * from './formats';
export * from './load';
