import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../zod';

export function registerHealth(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/health/', tags: ['health'], summary: 'Liveness of the API and its stores', security: [],
    responses: { 200: { description: 'UP', content: { 'text/plain': { schema: z.string() } } }, 503: { description: 'a store does not answer' } },
  });
}

