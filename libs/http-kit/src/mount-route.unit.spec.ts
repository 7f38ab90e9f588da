import { Router } from 'express';
import request from 'supertest';
import { defineRoute, z } from '@udp/contracts';
import { createLogger } from '@udp/telemetry';
import { expressPath, mountRoute } from './mount-route';
import { serviceHttpApp } from './service-app';

const responses = { 200: { description: 'ok' } };
const addTag = defineRoute({
  operationId: 'addTag',
  method: 'post',
  path: '/things/{thingId}/tags',
  tags: ['test'],
  summary: 'add a tag',
  request: {
    params: z.object({ thingId: z.string().regex(/^\d+$/, 'thingId is digits').transform(Number) }),
    query: z.object({ dryRun: z.enum(['true', 'false']).optional() }),
    body: z.object({ tag: z.string() }),
  },
  responses,
});
const readAt = defineRoute({
  operationId: 'readAt',
  method: 'get',
  path: '/docs/{key}/{path}',
  restParam: 'path',
  tags: ['test'],
  summary: 'read under a path',
  request: { params: z.object({ key: z.string(), path: z.string() }) },
  responses,
});
const download = defineRoute({
  operationId: 'download',
  method: 'get',
  path: '/files/{key}',
  malformedPathIsNotFound: true,
  tags: ['test'],
  summary: 'download',
  request: { params: z.object({ key: z.string().length(4, 'key is 4 characters') }) },
  responses,
});

/** Parts that are always up: these apps test the edge, not /health/. */
const health = { store: { ping: async () => true }, readModels: { ping: async () => true }, projectors: [] };
function app() {
  const a = Router();
  mountRoute(a, addTag, ({ params, query, body }, _req, res) => {
    res.json({ thingId: params.thingId, dryRun: query.dryRun ?? null, tag: body.tag });
  });
  mountRoute(a, readAt, ({ params }, req, res) => {
    res.json({ key: params.key, path: params.path, segments: req.params.path });
  });
  mountRoute(a, download, ({ params }, _req, res) => {
    res.json({ key: params.key });
  });
  return serviceHttpApp({ logger: createLogger('test', 'silent'), maxBodyBytes: 1024, health, publicRoutes: [a] });
}

describe('mountRoute', () => {
  it('turns `{name}` into `:name`, and the rest parameter into `*name`', () => {
    expect(expressPath(addTag)).toBe('/things/:thingId/tags');
    expect(expressPath(readAt)).toBe('/docs/:key/*path');
  });

  it("hands the handler the params, query and body parsed by the route's schemas", async () => {
    const res = await request(app()).post('/things/42/tags?dryRun=true').send({ tag: 'red', extra: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ thingId: 42, dryRun: 'true', tag: 'red' });
  });

  it('answers the usual 400 problem naming the field, for the path, the query and the body alike', async () => {
    const cases: Array<[string, unknown, string, string]> = [
      ['/things/x/tags', { tag: 'red' }, 'thingId', 'invalid path'],
      ['/things/1/tags?dryRun=maybe', { tag: 'red' }, 'dryRun', 'invalid query'],
      ['/things/1/tags', { tag: 5 }, 'tag', 'invalid body'],
    ];
    for (const [path, body, field, detail] of cases) {
      const res = await request(app())
        .post(path)
        .send(body as object);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
      expect(res.body.detail).toMatch(new RegExp(`^${detail}`));
    }
  });

  it('hands a query asked again the same parsed value, frozen; a refused one is refused each time', async () => {
    const seen: unknown[] = [];
    const router = Router();
    mountRoute(router, addTag, ({ query }, _req, res) => {
      seen.push(query);
      res.json({ frozen: Object.isFrozen(query), dryRun: query.dryRun ?? null });
    });
    const server = serviceHttpApp({ logger: createLogger('test', 'silent'), maxBodyBytes: 1024, health, publicRoutes: [router] });
    const ask = (query: string) => request(server).post(`/things/1/tags${query}`).send({ tag: 'red' });
    const answers = [await ask('?dryRun=true'), await ask('?dryRun=true'), await ask('?dryRun=false'), await ask('')];
    expect(answers.map((a) => a.body)).toEqual([
      { frozen: true, dryRun: 'true' },
      { frozen: true, dryRun: 'true' },
      { frozen: true, dryRun: 'false' },
      { frozen: true, dryRun: null },
    ]);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).not.toBe(seen[0]);
    for (let i = 0; i < 2; i++) expect((await ask('?dryRun=maybe')).status).toBe(400);
  });

  it('validates a rest parameter as the text it documents; its decoded segments stay in req.params', async () => {
    const res = await request(app()).get('/docs/settings/a%2Fb/0');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ key: 'settings', path: 'a/b/0', segments: ['a/b', '0'] });
  });

  it('answers 404 for a malformed path when the route says a malformed path names nothing', async () => {
    expect((await request(app()).get('/files/abcd')).body).toEqual({ key: 'abcd' });
    const res = await request(app()).get('/files/abc');
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/key is 4 characters/);
  });
});
