export * from './port';
export { InProcessBus } from './in-process';
export { KafkaBus, type KafkaBusOptions } from './kafka';
export { inConsumerSpan } from './consumer-span';
