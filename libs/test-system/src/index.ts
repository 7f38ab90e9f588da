// The test system: the platform in one process on memory adapters for API specs - the gateway and services
// (system), given / when / then over HTTP (api-specification), a store that races writers (racing-store), a bus
// that records (recording-bus) and the erasure scenario helpers. Plain helpers are in libs/test-kit.
export * from './system';
export * from './racing-store';
export * from './api-specification';
export * from './projection-specification';
export * from './recording-bus';
export * from './erasure';
