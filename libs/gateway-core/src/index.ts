export * from './gateway';
export { serviceHealth, type ServiceHealth } from './proxy';
