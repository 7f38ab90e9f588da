export { z } from './zod';
export * from './common';
export * from './history';
export * as historyEvents from './events/history';
export { buildOpenApiDocument } from './openapi';
