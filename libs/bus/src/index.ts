export * from './bus';
export * from './errors';
export * from './headers';
export * from './nats-server';
export * from './run';
export * from './trace';
