export * from './logger';
export * from './tracing';
