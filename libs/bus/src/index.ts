export * from './bus';
export * from './discovery';
export * from './errors';
export * from './headers';
export * from './nats-server';
export * from './run';
export * from './trace';
