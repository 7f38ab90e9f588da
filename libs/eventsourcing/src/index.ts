export * from './decider';
export * from './command-handler';
export * from './projector';
export * from './integration-publisher';
