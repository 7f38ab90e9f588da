export * from './system';
export * from './racing-store';
export * from './api-specification';
export * from './recording-bus';
export * from './erasure';
