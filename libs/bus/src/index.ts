export * from './port';
export { InProcessBus } from './in-process';
export { KafkaBus } from './kafka';
