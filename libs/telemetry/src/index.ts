export * from './logger';
export * from './tracing';
export * from './debug-spans';
export * from './redaction';
export * from './sampling';
export * from './edge';
export * from './metrics-catalogue';
