import request from 'supertest';
import { z } from 'zod';
import { InternalIdentity, IDENTITY_HEADER } from '@udp/auth';
import { ConcurrencyConflictError, notFound } from '@udp/eventsourcing';
import { Router } from 'express';
import { createLogger } from '@udp/telemetry';
import { nextTurn } from '@udp/retry';
import { HttpError } from './problem';
import { loggablePath, requireCaller, userIdOf } from './service-edge';
import { serviceHttpApp } from './service-app';
import { parseInput } from './mount-route';
import { sendJsonTextConditionally, versionTagger } from './conditional';

const identity = new InternalIdentity('k'.repeat(32));
/** Parts that are always up: these apps test the edge, not /health/. */
const health = { store: { ping: async () => true }, readModels: { ping: async () => true }, projectors: [] };
function app() {
  const a = Router();
  a.post('/echo', (req, res) =>
    res.json(parseInput(z.object({ name: z.string(), tags: z.array(z.number()).optional() }), req.body, 'body')),
  );
  a.get('/missing', () => {
    throw notFound('no such thing');
  });
  a.get('/conflict', () => {
    throw new ConcurrencyConflictError('s', 1);
  });
  a.get('/teapot', () => {
    throw new HttpError(418, "I'm a teapot", 'short and stout');
  });
  a.get('/crash', () => {
    throw new Error('secret internals');
  });
  a.get('/me', requireCaller, (_req, res) => res.json({ userId: userIdOf(res) }));
  a.get('/things/:id', (req, res) => res.json({ id: req.params.id }));
  return serviceHttpApp({ logger: createLogger('test', 'silent'), maxBodyBytes: 1024, health, publicRoutes: [a], identity, routes: [] });
}

describe('http kit', () => {
  it('validates bodies and names each offending field, nested ones by path', async () => {
    const res = await request(app())
      .post('/echo')
      .send({ name: 1, tags: [1, 'x'] });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: expect.any(String), title: 'Bad Request', status: 400 });
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['name', 'tags[1]']);
  });

  it('ignores unknown fields', async () => {
    expect((await request(app()).post('/echo').send({ name: 'a', extra: true })).body).toEqual({ name: 'a' });
  });

  it('answers 400 for malformed JSON, 413 past the size limit, 415 for other content types', async () => {
    expect((await request(app()).post('/echo').set('content-type', 'application/json').send('{"name":')).status).toBe(400);
    expect(
      (
        await request(app())
          .post('/echo')
          .send({ name: 'x'.repeat(2000) })
      ).status,
    ).toBe(413);
    const text = await request(app()).post('/echo').set('content-type', 'text/plain').send('name');
    expect(text.status).toBe(415);
    expect(text.body.detail).toMatch(/application\/json/);
  });

  it('maps domain errors, conflicts and HTTP errors to their status', async () => {
    expect((await request(app()).get('/missing')).status).toBe(404);
    const conflict = await request(app()).get('/conflict');
    expect(conflict.status).toBe(429);
    expect(conflict.headers['retry-after']).toBe('1');
    expect((await request(app()).get('/teapot')).status).toBe(418);
  });

  it('hides internals of unexpected errors behind a 500 with the request id', async () => {
    const res = await request(app()).get('/crash').set('x-request-id', 'req-123');
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toMatch(/secret internals/);
    expect(res.body.request_id).toBe('req-123');
    expect(res.headers['x-request-id']).toBe('req-123');
  });

  it('gives every request an id, replacing a malformed one', async () => {
    const res = await request(app()).get('/missing').set('x-request-id', 'bad id with spaces');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('trusts only an identity signed with the shared secret', async () => {
    expect((await request(app()).get('/me')).status).toBe(401);
    expect(
      (
        await request(app())
          .get('/me')
          .set(IDENTITY_HEADER, new InternalIdentity('x'.repeat(32)).sign({ userId: 'eve' }))
      ).status,
    ).toBe(401);
    expect(
      (
        await request(app())
          .get('/me')
          .set(IDENTITY_HEADER, identity.sign({ userId: 'ann' }))
      ).body,
    ).toEqual({ userId: 'ann' });
  });

  it('answers unknown routes with a 404 problem', async () => {
    const res = await request(app()).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/GET \/nope/);
  });

  it.each(['/things/%ff', '/things/%E0%A4%A', '/things/%', '/things/%ED%A0%80', '/nowhere/%zz'])(
    'answers 400 problem+json, without a stack trace, to the undecodable path %s',
    async (path) => {
      const res = await request(app()).get(path);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors).toEqual([{ field: 'path', message: 'malformed percent-encoding' }]);
      expect(res.text).not.toMatch(/URIError|\bat .+:\d+:\d+/);
    },
  );

  it('still decodes well-formed escapes', async () => {
    expect((await request(app()).get('/things/a%2Fb%C3%A9')).body).toEqual({ id: 'a/bé' });
  });
});

describe('access log paths', () => {
  it('leave out query strings and export keys (capabilities)', () => {
    expect(loggablePath('/api/history/v2?after=1')).toBe('/api/history/v2');
    expect(loggablePath('/api/data/export/public/AbC_123-xyzAbC_123-xyz')).toBe('/api/data/export/public/{key}');
    expect(loggablePath('/api/data/export/AbC_123-xyzAbC_123-xyz?x=1')).toBe('/api/data/export/{key}');
    expect(loggablePath('/api/data/export')).toBe('/api/data/export');
  });
});

describe('conditional JSON with a version', () => {
  const versions = Router();
  const versioned = serviceHttpApp({ logger: createLogger('test', 'silent'), maxBodyBytes: 1024, health, publicRoutes: [versions] });
  let made = 0;
  const tagOf = versionTagger(Buffer.from('k'.repeat(32)));
  versions.get('/v/:version', (req, res) =>
    sendJsonTextConditionally(
      req,
      res,
      () => (made++, JSON.stringify({ version: req.params.version })),
      tagOf(`position ${req.params.version}`),
    ),
  );

  it('tags the version without showing it, answers 304 on the tag without making the body, and tags another version apart', async () => {
    const first = await request(versioned).get('/v/123456');
    expect(first.body).toEqual({ version: '123456' });
    expect(first.headers.etag).toMatch(/^W\/"v[\w-]+"$/);
    expect(first.headers.etag).not.toContain('123456');
    expect(Buffer.from(first.headers.etag.slice(4, -1), 'base64url').toString('latin1')).not.toContain('123456');
    made = 0;
    const again = await request(versioned).get('/v/123456').set('if-none-match', first.headers.etag);
    expect([again.status, made]).toEqual([304, 0]);
    expect((await request(versioned).get('/v/123457')).headers.etag).not.toBe(first.headers.etag);
  });

  it('ends the answer with the turn, not at once: the answers of one turn are written together', async () => {
    const endedAtOnce: boolean[] = [];
    versions.get('/turn', (req, res) => {
      sendJsonTextConditionally(req, res, () => '{"a":1}');
      endedAtOnce.push(res.writableEnded);
    });
    const answer = await request(versioned).get('/turn');
    expect([answer.status, answer.body, answer.headers['content-length']]).toEqual([200, { a: 1 }, '7']);
    const notModified = await request(versioned).get('/turn').set('if-none-match', answer.headers.etag);
    expect([notModified.status, endedAtOnce]).toEqual([304, [false, false]]);
  });

  it('ends the answer at once when sliced work waits: the turn would resume a slice of it first', async () => {
    let endedAtOnce: boolean | undefined;
    versions.get('/sliced', (req, res) => {
      const resumed = nextTurn();
      sendJsonTextConditionally(req, res, () => '{"b":2}');
      endedAtOnce = res.writableEnded;
      return resumed;
    });
    const answer = await request(versioned).get('/sliced');
    expect([answer.status, answer.body, endedAtOnce]).toEqual([200, { b: 2 }, true]);
  });

  it('tags by its key: the same key, the same tag (replicas agree); another key, another tag', () => {
    const [a, b] = [versionTagger(Buffer.from('k'.repeat(32))), versionTagger(Buffer.from('l'.repeat(32)))];
    expect(a('position 1')).toBe(tagOf('position 1'));
    expect(b('position 1')).not.toBe(a('position 1'));
  });
});
