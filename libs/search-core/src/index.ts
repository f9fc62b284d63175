export * from './text';
export * from './concepts';
export * from './fields';
export * from './facts';
export * from './query';
export * from './score';
