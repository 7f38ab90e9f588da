export * from './components';
export * from './config';
export * from './router';
export * from './secrets';
export * from './selection';
