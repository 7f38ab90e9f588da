export * from './problem';
export * from './validation';
export * from './service-app';
