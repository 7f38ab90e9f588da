import { buildOpenApiDocument } from './openapi';
import { EndpointQuery } from './personalisation';

describe('personalisation contracts', () => {
  it('documents GET /api/v1/{codops}/{endpoint} with its query and the debug header', () => {
    const operation = buildOpenApiDocument().paths?.['/api/v1/{codops}/{endpoint}']?.get;
    expect(operation).toBeDefined();
    const names = (operation!.parameters as Array<{ name: string }>).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['codops', 'endpoint', 'u', 'size', 'component', 'stream', 'x-service-debug-secret']));
  });

  it('accepts a UUID u and sizes 1-100 only', () => {
    const u = '0b6f4d0c-8c77-4a3b-9a7e-2f1c0f6b6a10';
    expect(EndpointQuery.parse({ u, size: '100' })).toEqual({ u, size: 100 });
    for (const bad of [{ u: 'x' }, { u, size: '0' }, { u, size: '101' }, { u, size: '1.5' }, {}])
      expect(EndpointQuery.safeParse(bad).success).toBe(false);
  });
});
