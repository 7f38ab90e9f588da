export * from './port';
export { MemoryReadModelStore } from './memory';
export { MongoReadModelStore } from './mongo';
