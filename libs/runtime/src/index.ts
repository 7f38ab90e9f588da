export * from './adapters';
export * from './server';
export * from './service-process';
export * from './traced-adapters';
export * from './service-parts';
export { SNAPSHOTS_COLLECTION } from './snapshot-documents';
