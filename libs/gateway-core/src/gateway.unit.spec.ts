import type { Server } from 'node:http';
import express, { Router } from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, IDENTITY_HEADER, InternalIdentity, signDevToken } from '@udp/auth';
import { closeServer, listen } from '@udp/runtime';
import { createLogger, startMetrics, stopMetrics } from '@udp/telemetry';
import { collectingReader } from '@udp/test-kit';
import { serviceHttpApp, userIdOf } from '@udp/http-kit';
import { createGateway } from './gateway';

const secret = 'g'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const logger = createLogger('test', 'silent');
/** Parts that are always up: the services here test the hop, not /health/. */
const health = { store: { ping: async () => true }, readModels: { ping: async () => true }, projectors: [] };
let upstream: Server;
let upstreamUrl: string;
let seen: express.Request['headers'] = {};
let healthy = true;
let upstreamApp: express.Express;

beforeAll(async () => {
  const app = express();
  upstreamApp = app;
  // As a service answers: UP as text, or a problem naming its parts.
  app.get('/health/', (_req, res) =>
    healthy
      ? res.type('text/plain').send('UP')
      : res
          .status(503)
          .type('application/problem+json')
          .send(JSON.stringify({ status: 503, checks: { event_store: 'UP', read_models: 'DOWN' } })),
  );
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
    routes: [
      { prefixes: ['/api/things'], url },
      { prefixes: ['/public'], url, public: true },
    ],
  });

describe('gateway', () => {
  it('is live and ready while a service is down (its probes call no service), and /health/ says which is down', async () => {
    const unreachable = gateway('http://127.0.0.1:9');
    expect((await request(unreachable).get('/livez')).status).toBe(200);
    const ready = await request(unreachable).get('/readyz');
    expect([ready.status, ready.text]).toEqual([200, 'UP']);
    expect((await request(unreachable).get('/health/')).status).toBe(503);
  });

  it('forwards method, path, query, body and answer; vouches for the caller; drops credentials', async () => {
    const token = await signDevToken(secret, 'alice');
    const res = await request(gateway())
      .post('/api/things/x?y=1')
      .set('authorization', `Bearer ${token}`)
      .set('cookie', 'c=1')
      .send({ a: 1 });
    expect(res.status).toBe(201);
    expect(res.headers.etag).toBe('"v1"');
    expect(res.body).toEqual({ method: 'POST', url: '/api/things/x?y=1', body: { a: 1 } });
    expect(identity.verify(seen[IDENTITY_HEADER] as string)).toEqual({ userId: 'alice' });
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(seen['x-request-id']).toBe(res.headers['x-request-id']);
  });

  it("passes no caller's trace context (traceparent, tracestate, baggage) to a service, over HTTP or in process", async () => {
    const token = await signDevToken(secret, 'alice');
    const inProcess = createGateway({
      logger,
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/things'], url: 'http://127.0.0.1:1', handler: upstreamApp }],
    });
    for (const app of [gateway(), inProcess]) {
      seen = {};
      const res = await request(app)
        .get('/api/things/x')
        .set('authorization', `Bearer ${token}`)
        .set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
        .set('tracestate', 'udp=p:1.000000')
        .set('baggage', 'userId=someone-else');
      expect(res.status).toBe(201);
      expect(seen.traceparent).toBeUndefined();
      expect(seen.tracestate).toBeUndefined();
      expect(seen.baggage).toBeUndefined();
    }
  });

  it('calls an in-process service handler with the same path, headers and body as over HTTP, minus credentials', async () => {
    const inProcess = createGateway({
      logger,
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/things'], url: 'http://127.0.0.1:1', handler: upstreamApp }],
    });
    const token = await signDevToken(secret, 'bob');
    const res = await request(inProcess).put('/api/things/y?z=2').set('authorization', `Bearer ${token}`).send({ b: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ method: 'PUT', url: '/api/things/y?z=2', body: { b: 2 } });
    expect(seen[IDENTITY_HEADER]).toBeUndefined(); // the forged one dropped; the caller is handed over in-process
    expect(seen.authorization).toBeUndefined();
    expect(seen['x-request-id']).toBe(res.headers['x-request-id']);
    expect((await request(inProcess).get('/api/things')).status).toBe(401);
  });

  it('hands the authenticated caller to an in-process service, which no forged header can replace', async () => {
    const me = Router().get('/api/me', (_req, res) => res.json({ userId: userIdOf(res) }));
    const service = serviceHttpApp({ logger, maxBodyBytes: 1024, health, identity, routes: [me] });
    const inProcess = createGateway({
      logger,
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/me'], url: 'http://127.0.0.1:1', handler: service }],
    });
    const carol = `Bearer ${await signDevToken(secret, 'carol')}`;
    expect((await request(inProcess).get('/api/me').set('authorization', carol)).body).toEqual({ userId: 'carol' });
    // A client-sent identity header is refused at the edge (400), so it never reaches the service as anyone.
    const forged = await request(inProcess)
      .get('/api/me')
      .set('authorization', carol)
      .set(IDENTITY_HEADER, identity.sign({ userId: 'mallory' }));
    expect(forged.status).toBe(400);
    expect(forged.text).not.toContain('mallory');
    // Straight to the service (no gateway), a request carries no handed-over caller: the header alone counts.
    expect((await request(service).get('/api/me')).status).toBe(401);
    expect(
      (
        await request(service)
          .get('/api/me')
          .set(IDENTITY_HEADER, identity.sign({ userId: 'dave' }))
      ).body,
    ).toEqual({ userId: 'dave' });
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

  it('names each service and the parts a DOWN service reported', async () => {
    healthy = false;
    const named = createGateway({
      logger,
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [
        { name: 'things-svc', prefixes: ['/api/things'], url: upstreamUrl },
        { name: 'gone-svc', prefixes: ['/gone'], url: 'http://127.0.0.1:1' },
      ],
    });
    const down = await request(named).get('/health/');
    healthy = true;
    expect(down.status).toBe(503);
    expect(down.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(down.body.detail).toBe('DOWN: things-svc (read_models); gone-svc');
    expect(down.body.services).toEqual({
      'things-svc': { status: 'DOWN', checks: { event_store: 'UP', read_models: 'DOWN' } },
      'gone-svc': { status: 'DOWN' },
    });
  });

  it('publishes the OpenAPI document and a docs page', async () => {
    const doc = await request(gateway()).get('/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/api/history/v2', '/api/history/v2/positions', '/health/']));
    const page = await request(gateway()).get('/docs');
    expect(page.text).toMatch(/swagger-ui-bundle\.js/);
    expect((await request(gateway()).get('/docs/assets/swagger-ui-bundle.js')).status).toBe(200);
  });

  it('publishes the AsyncAPI document of the bus topics without a token', async () => {
    const doc = await request(gateway()).get('/asyncapi.json');
    expect([doc.status, doc.headers['content-type']]).toEqual([200, expect.stringMatching(/^application\/json/)]);
    expect(doc.body.asyncapi).toBe('3.0.0');
    expect(Object.values(doc.body.channels).map((c) => (c as { address: string }).address)).toEqual(
      expect.arrayContaining(['userdata.erasure.requested', 'userdata.erasure.confirmed', 'user-data.history.v1']),
    );
  });

  it('answers 405 with Allow and a problem for a method the document does not list on a documented path', async () => {
    const cases: Array<[string, string, string]> = [
      ['TRACE', '/health/', 'GET, HEAD'],
      ['PATCH', '/api/history/v2', 'DELETE, GET, HEAD, POST'],
      ['GET', '/api/history/v2/batch', 'POST'],
      ['DELETE', '/api/history/v2/batch', 'POST'],
      ['TRACE', '/api/preference/theme/favorites/urn:a/date', 'DELETE, GET, HEAD, POST, PUT'],
      ['OPTIONS', '/api/playlist/v3/watch_later/bookmarks', 'DELETE, POST, PUT'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await request(gateway())[method.toLowerCase() as 'get'](path);
      expect([method, path, res.status]).toEqual([method, path, 405]);
      expect(res.headers.allow).toBe(allow);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    // A path the document does not know is not the method's fault.
    expect((await request(gateway()).trace('/api/nowhere')).status).toBe(404);
  });

  it('refuses a client-sent identity header with 400, even on public routes', async () => {
    const res = await request(gateway()).get('/public/x').set(IDENTITY_HEADER, 'v1.forged');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: IDENTITY_HEADER, message: expect.any(String) }]);
  });
});

describe('access log', () => {
  /** A logger whose JSON lines land in `lines`. */
  const capturing = (service: string) => {
    const lines: Array<Record<string, unknown>> = [];
    return { lines, logger: createLogger(service, 'info', { write: (line: string) => void lines.push(JSON.parse(line)) }) };
  };
  const accessLines = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.message === 'request');

  it("writes one line for a request handed over in process: the gateway's, naming the service and its time", async () => {
    const gatewayLog = capturing('gateway');
    const serviceLog = capturing('demo-svc');
    const things = Router().get('/api/things/:id', (req, res) => {
      // The service's own lines still say they are the service's, under the gateway's request id.
      req.log.info('inside');
      res.json({ ok: true });
    });
    const service = serviceHttpApp({ logger: serviceLog.logger, maxBodyBytes: 1024, health, publicRoutes: [things] });
    const app = createGateway({
      logger: gatewayLog.logger,
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/things'], url: 'http://127.0.0.1:1', handler: service }],
    });
    const token = await signDevToken(secret, 'carol');
    const res = await request(app).get('/api/things/7?secret=q').set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);

    // One context per request: the gateway's access line only, naming the service that answered.
    const [gatewayLine, ...moreGateway] = accessLines(gatewayLog.lines);
    expect(moreGateway).toEqual([]);
    expect(accessLines(serviceLog.lines)).toEqual([]);
    expect(gatewayLine).toMatchObject({
      service: 'gateway',
      upstream: 'demo-svc',
      method: 'GET',
      path: '/api/things/7',
      status: 200,
      request_id: res.headers['x-request-id'],
    });
    expect(typeof gatewayLine.upstream_ms).toBe('number');
    expect(gatewayLine.upstream_ms as number).toBeLessThanOrEqual(gatewayLine.ms as number);
    expect(serviceLog.lines.find((l) => l.message === 'inside')).toMatchObject({
      service: 'demo-svc',
      request_id: res.headers['x-request-id'],
    });
  });

  it('gives the upstream time over HTTP too, and none for what the gateway answers itself', async () => {
    const gatewayLog = capturing('gateway');
    const app = createGateway({
      logger: gatewayLog.logger,
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/public'], url: upstreamUrl, public: true }],
    });
    expect((await request(app).get('/public/a')).status).toBe(200);
    expect((await request(app).get('/openapi.json')).status).toBe(200);
    const [proxied, own] = accessLines(gatewayLog.lines);
    expect(proxied).toMatchObject({ service: 'gateway', path: '/public/a', status: 200 });
    expect(typeof proxied.upstream_ms).toBe('number');
    expect(own).toMatchObject({ service: 'gateway', path: '/openapi.json' });
    expect(own.upstream_ms).toBeUndefined();
  });
});

describe('request metrics of a request handed over in process', () => {
  const collected = collectingReader();
  beforeAll(() => startMetrics({ serviceName: 'test', readers: [collected.reader] }));
  afterAll(() => stopMetrics());

  it('records one duration per hop, each with the route, status and its own app, the service no longer than the gateway', async () => {
    const things = Router().get('/api/things/:id', (_req, res) => res.json({ ok: true }));
    const service = serviceHttpApp({ logger: createLogger('demo-svc', 'silent'), maxBodyBytes: 1024, health, publicRoutes: [things] });
    const app = createGateway({
      logger: createLogger('gateway', 'silent'),
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/things'], url: 'http://127.0.0.1:1', handler: service, public: true }],
    });
    for (const id of ['1', '2', '3']) expect((await request(app).get(`/api/things/${id}`)).status).toBe(200);
    expect((await request(app).get('/api/things/%ff')).status).toBe(400);

    const points = await collected.points('http.server.request.duration');
    const of = (app: string, status: number) =>
      points.filter((p) => p.attributes['udp.service'] === app && p.attributes['http.response.status_code'] === status);
    for (const app of ['gateway', 'demo-svc']) {
      const [ok, ...more] = of(app, 200);
      expect(more).toEqual([]);
      expect(ok.attributes).toEqual({
        'http.request.method': 'GET',
        'http.route': '/api/things/:id',
        'http.response.status_code': 200,
        'udp.service': app,
      });
      expect(ok.value).toBe(3);
    }
    // The malformed path: refused by the gateway's one check, never handed over.
    expect(of('gateway', 400).map((p) => p.value)).toEqual([1]);
    expect(of('demo-svc', 400)).toEqual([]);
    expect(points.reduce((sum, p) => sum + p.value, 0)).toBe(7);
  });
});
