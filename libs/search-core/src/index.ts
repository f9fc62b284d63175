export * from './text';
export * from './fields';
export * from './query';
export * from './score';
export * from './who';
export * from './keyword-index';
export * from './typed-columns';
export * from './key-order';
