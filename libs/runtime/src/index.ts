export * from './adapters';
export * from './server';
export * from './service-process';
