import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { byPrefix, inOneLayer } from './mount-route';

/** What a chain saw of the request, as the answer's body. */
const answer =
  (name: string): RequestHandler =>
  (req, res) =>
    void res.json({ name, baseUrl: req.baseUrl, url: req.url });

function app(...handlers: RequestHandler[]) {
  const a = express();
  for (const h of handlers) a.use(h);
  a.use((req, res) => void res.status(404).json({ fell: req.url, baseUrl: req.baseUrl }));
  a.use(((error, _req, res, _next) => void res.status(500).json({ error: (error as Error).message })) as express.ErrorRequestHandler);
  return a;
}

describe('byPrefix: app.use(prefix, ...chain) for each mount, as one layer', () => {
  const mounts = byPrefix([
    { prefix: '/api/data/export/public', chain: [answer('public')] },
    { prefix: '/api/data', chain: [answer('data')] },
    { prefix: '/api/history', chain: [(_req, _res, next) => next(), answer('history')] },
  ]);

  it('runs the chain of the first prefix the path is under, in any case, with the prefix as baseUrl while it runs', async () => {
    // Given the mounts in order, when paths at, under and beside the prefixes are asked, then each goes to its own
    expect((await request(app(mounts)).get('/api/history/v2?limit=1')).body).toEqual({
      name: 'history',
      baseUrl: '/api/history',
      url: '/v2?limit=1',
    });
    expect((await request(app(mounts)).get('/API/History')).body).toEqual({ name: 'history', baseUrl: '/API/History', url: '/' });
    expect((await request(app(mounts)).get('/api/history?x=1')).body).toMatchObject({ url: '/?x=1' });
    expect((await request(app(mounts)).get('/api/data/export/public/k')).body.name).toBe('public');
    expect((await request(app(mounts)).get('/api/data/export/k')).body.name).toBe('data');
    const beside = await request(app(mounts)).get('/api/historyx');
    expect([beside.status, beside.body]).toEqual([404, { fell: '/api/historyx', baseUrl: '' }]);
  });

  it('goes on to the next mount under the path when a chain passes the request on, and past all with the URL as it was', async () => {
    const passing = byPrefix([
      { prefix: '/api/data/export/public', chain: [(_req, _res, next) => next()] },
      { prefix: '/api/data', chain: [answer('data')] },
    ]);
    expect((await request(app(passing)).get('/api/data/export/public/k')).body).toEqual({
      name: 'data',
      baseUrl: '/api/data',
      url: '/export/public/k',
    });
    const none = byPrefix([{ prefix: '/api/data', chain: [(_req, _res, next) => next()] }]);
    expect((await request(app(none)).get('/api/data/x')).body).toEqual({ fell: '/api/data/x', baseUrl: '' });
  });

  it('hands an error (passed on, thrown, or of a rejected promise) to the error handler', async () => {
    const failing = (how: string): RequestHandler =>
      byPrefix([
        {
          prefix: '/p',
          chain: [
            (_req, _res, next) => {
              if (how === 'next') return next(new Error('passed'));
              if (how === 'throw') throw new Error('thrown');
              return Promise.reject(new Error('rejected')) as unknown as void;
            },
          ],
        },
      ]);
    for (const [how, message] of [
      ['next', 'passed'],
      ['throw', 'thrown'],
      ['reject', 'rejected'],
    ]) {
      const res = await request(app(failing(how))).get('/p/x');
      expect([res.status, res.body]).toEqual([500, { error: message }]);
    }
  });
});

describe('inOneLayer', () => {
  it('runs the middleware in order, treating a null passed to next as no error', async () => {
    const seen: string[] = [];
    const layer = inOneLayer([(_req, _res, next) => (seen.push('a'), next(null)), (_req, _res, next) => (seen.push('b'), next())]);
    const res = await request(app(layer, answer('end'))).get('/x');
    expect([res.body.name, seen]).toEqual(['end', ['a', 'b']]);
  });
});
