export * from './port';
export { MemoryReadModelStore, type ReadModelImage } from './memory';
export { MongoReadModelStore } from './mongo';
export { PostgresReadModelStore, type PostgresReadModelOptions } from './postgres';
export { SqliteReadModelStore, type SqliteReadModelsOptions } from './sqlite';
export { reusedFind } from './reused-finds';
export { withCollections } from './with-collections';
