// The test kit: small helpers any test may use, built on Node alone (no platform library), so the libraries that
// the in-memory test system (libs/test-system) is made of can use it in their own tests without a cycle.
// Deciders as given / when / then, skips that say why, child processes, waiting, reading zips, collecting metrics.
export * from './specification';
export * from './scenario';
export * from './environment';
export * from './process';
export * from './unzip';
export * from './mongo';
export * from './collecting-reader';
export * from './postgres-scan';
