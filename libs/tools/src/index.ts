export * from './schema-types';
export * from './tools-xml';
export * from './kit';
export * from './tasks';
export * from './field-text';
