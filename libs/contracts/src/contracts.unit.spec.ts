import { HistoryQuery, NewItem, PositionsQuery } from './history';
import { PUBLIC_ROUTES, buildOpenApiDocument } from './openapi';

describe('history contracts', () => {
  it('parse query strings into typed values', () => {
    expect(HistoryQuery.parse({ after: '10', limit: '5', with_deleted: 'true' })).toEqual({ after: 10, limit: 5, with_deleted: true });
    expect(PositionsQuery.parse({ item_ids: 'a, b,,c' }).item_ids).toEqual(['a', 'b', 'c']);
  });

  it('refuse out-of-range and malformed values', () => {
    expect(HistoryQuery.safeParse({ limit: '0' }).success).toBe(true); // 0: only the sync position
    expect(HistoryQuery.safeParse({ limit: '-1' }).success).toBe(false);
    expect(HistoryQuery.safeParse({ since: '12.bad+token' }).success).toBe(false);
    for (const id of ['a\u0000', '\n', 'x\u007f']) expect(NewItem.safeParse({ item_id: id }).success).toBe(false);
    expect(HistoryQuery.safeParse({ limit: '1001' }).success).toBe(false);
    expect(HistoryQuery.safeParse({ after: '-1' }).success).toBe(false);
    expect(HistoryQuery.safeParse({ with_deleted: 'yes' }).success).toBe(false);
    expect(NewItem.safeParse({ item_id: 'a', last_playback_position: Infinity }).success).toBe(false);
  });
});

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument();

  it('is OpenAPI 3.1 with the spec version and both auth schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('3.0.0');
    expect(Object.keys(doc.components?.securitySchemes ?? {})).toEqual(['bearer', 'sessionToken']);
  });

  it('documents every history operation with schemas from the contracts', () => {
    const paths = doc.paths ?? {};
    for (const base of ['/api/history', '/api/history/v2']) {
      expect(Object.keys(paths[base] ?? {}).sort()).toEqual(['delete', 'get', 'post']);
      expect(paths[`${base}/batch`]?.post).toBeDefined();
      expect(paths[`${base}/positions`]?.get).toBeDefined();
    }
    expect(paths['/api/history/{id}']?.delete?.deprecated).toBe(true);
    expect(paths['/api/history/v2/{itemId}']?.delete).toBeDefined();
    expect(Object.keys(doc.components?.schemas ?? {})).toEqual(
      expect.arrayContaining(['NewItem', 'Item', 'History', 'HistoryItemBatch', 'Positions', 'ProblemDetails']),
    );
  });

  it('documents the data-management operations, the public download without credentials', () => {
    const paths = doc.paths ?? {};
    expect(Object.keys(paths['/api/data/export'] ?? {}).sort()).toEqual(['delete', 'get', 'post']);
    expect(paths['/api/data']?.delete?.responses).toHaveProperty('202');
    expect(paths['/api/data/export/{key}']?.get).toBeDefined();
    expect(paths['/api/data/export/{key}']?.delete).toBeDefined();
    expect(paths['/api/data/export/public/{key}']?.get?.security).toEqual([]);
    expect(paths['/api/data/erasure/{erasureId}']?.get).toBeDefined();
    expect(Object.keys(doc.components?.schemas ?? {})).toEqual(expect.arrayContaining(['ExportRequest', 'ExportStatus', 'ErasureStatus']));
  });

  it('documents the gateway rate limit (429 rate-limited with Retry-After) on every operation, beside a write conflict', () => {
    const operations = Object.values(doc.paths ?? {}).flatMap((operations) => Object.values(operations ?? {}));
    for (const operation of operations) {
      const tooMany = (operation as { responses: Record<string, { description: string; headers?: object }> }).responses['429'];
      expect(tooMany.description).toContain('rate-limited');
      expect(tooMany.headers).toHaveProperty('Retry-After');
    }
    expect(doc.paths?.['/api/history/v2']?.post?.responses?.['429']).toMatchObject({
      description: expect.stringMatching(/another request is updating this history.*; or over a rate limit/),
    });
  });

  it('documents every route of the route tables, once each, and nothing else', () => {
    const documented = Object.entries(doc.paths ?? {}).flatMap(([path, operations]) =>
      Object.keys(operations ?? {}).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const declared = PUBLIC_ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect(new Set(declared).size).toBe(declared.length);
    expect(declared.sort()).toEqual(documented.sort());
  });
});
