export * from './system';
export * from './racing-store';
