export * from './port';
export { MemoryEventStore } from './memory';
export { SqliteEventStore } from './sqlite';
export { EsdbEventStore } from './esdb';
export * from './snapshot-store';
export { LastWriteFailure } from './write-failure';
export { workerEntry } from './worker-entry';
export { streamKey } from './sqlite-schema';
export { PostgresEventStore, type PostgresEventStoreOptions, segmentHash, segmentKeyOf } from './postgres';
