import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, IDENTITY_HEADER, InternalIdentity, signDevToken } from '@udp/auth';
import { closeServer, listen } from '@udp/runtime';
import { createLogger } from '@udp/telemetry';
import { createGateway } from './gateway';

const secret = 'g'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const logger = createLogger('test', 'silent');
let upstream: Server;
let upstreamUrl: string;
let seen: express.Request['headers'] = {};
let healthy = true;
let upstreamApp: express.Express;

beforeAll(async () => {
  const app = express();
  upstreamApp = app;
  app.get('/health/', (_req, res) => res.status(healthy ? 200 : 503).send(healthy ? 'UP' : 'DOWN'));
  app.use('/api/things', express.json(), (req, res) => {
    seen = req.headers;
    res.status(201).setHeader('etag', '"v1"');
    res.json({ method: req.method, url: req.originalUrl, body: req.body ?? null });
  });
  app.use('/public', (_req, res) => res.type('text/plain').send('open'));
  const started = await listen(app, 0, '127.0.0.1');
  upstream = started.server;
  upstreamUrl = `http://127.0.0.1:${started.port}`;
});
afterAll(() => closeServer(upstream));

const gateway = (url = upstreamUrl) =>
  createGateway({
    logger,
    identity,
    authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
    routes: [{ prefixes: ['/api/things'], url }, { prefixes: ['/public'], url, public: true }],
  });

describe('gateway', () => {
  it('forwards method, path, query, body and answer; vouches for the caller; drops credentials', async () => {
    const token = await signDevToken(secret, 'alice');
    const res = await request(gateway()).post('/api/things/x?y=1').set('authorization', `Bearer ${token}`).set('cookie', 'c=1').set(IDENTITY_HEADER, 'forged').send({ a: 1 });
    expect(res.status).toBe(201);
    expect(res.headers.etag).toBe('"v1"');
    expect(res.body).toEqual({ method: 'POST', url: '/api/things/x?y=1', body: { a: 1 } });
    expect(identity.verify(seen[IDENTITY_HEADER] as string)).toEqual({ userId: 'alice' });
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(seen['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it('calls an in-process service handler with the same path, headers and body as over HTTP', async () => {
    const inProcess = createGateway({
      logger, identity, authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/things'], url: 'http://127.0.0.1:1', handler: upstreamApp }],
    });
    const token = await signDevToken(secret, 'bob');
    const res = await request(inProcess).put('/api/things/y?z=2').set('authorization', `Bearer ${token}`).set(IDENTITY_HEADER, 'forged').send({ b: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ method: 'PUT', url: '/api/things/y?z=2', body: { b: 2 } });
    expect(identity.verify(seen[IDENTITY_HEADER] as string)).toEqual({ userId: 'bob' });
    expect(seen.authorization).toBeUndefined();
    expect((await request(inProcess).get('/api/things')).status).toBe(401);
  });

  it('answers 401 before forwarding when credentials are missing or wrong', async () => {
    seen = {};
    expect((await request(gateway()).get('/api/things')).status).toBe(401);
    expect((await request(gateway()).get('/api/things').set('authorization', 'Bearer nope')).status).toBe(401);
    expect(seen).toEqual({});
  });

  it('forwards public routes without credentials', async () => {
    expect((await request(gateway()).get('/public')).text).toBe('open');
  });

  it('answers 502 as a problem when the service is down', async () => {
    const token = await signDevToken(secret, 'alice');
    const res = await request(gateway('http://127.0.0.1:1')).get('/api/things').set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(502);
    expect(res.body.title).toBe('Bad Gateway');
  });

  it('reports UP only when every service answers its health probe', async () => {
    healthy = true;
    expect((await request(gateway()).get('/health/')).text).toBe('UP');
    healthy = false;
    const down = await request(gateway()).get('/health/');
    expect(down.status).toBe(503);
    healthy = true;
    expect((await request(gateway('http://127.0.0.1:1')).get('/health/')).status).toBe(503);
  });

  it('publishes the OpenAPI document and a docs page', async () => {
    const doc = await request(gateway()).get('/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/api/history/v2', '/api/history/v2/positions', '/health/']));
    const page = await request(gateway()).get('/docs');
    expect(page.text).toMatch(/swagger-ui-bundle\.js/);
    expect((await request(gateway()).get('/docs/assets/swagger-ui-bundle.js')).status).toBe(200);
  });
});
