export * from './adapters';
export * from './server';
