export * from './item';
export * from './ask';
export * from './message';
export * from './errors';
export * from './subjects';
export * from './a2a';
export * from './understanding';
export * from './tool-answers';
