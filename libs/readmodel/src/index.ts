export * from './port';
export { MemoryReadModelStore, type ReadModelImage } from './memory';
export { PersistedMemoryReadModelStore, READ_MODELS_FORMAT, READ_MODELS_VERSION, type PersistedReadModelsOptions } from './persisted';
export { MongoReadModelStore } from './mongo';
