export * from './problem';
export * from './validation';
export * from './service-app';
export * from './debug-handback';
export * from './conditional';
export * from './mount-route';
export * from './request-observation';
