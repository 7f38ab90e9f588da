import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { Router } from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { serviceHttpApp } from '@udp/http-kit';
import { closeServer, listen } from '@udp/runtime';
import { createLogger, startTracing, stopTracing } from '@udp/telemetry';
import { createGateway } from './gateway';

/**
 * The trace of a request over the gateway -> service HTTP hop (the distributed mode), as tracing runs without a
 * collector: a request whose trace is not recorded has no span, yet the gateway sends its trace id on with the
 * sampled flag off, so the service records nothing either and both hops' log lines carry the same trace id.
 */
const secret = 'g'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const lines: Array<Record<string, unknown>> = [];
const logged = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});
const health = { store: { ping: async () => true }, readModels: { ping: async () => true }, projectors: [] };
let service: Server;
let traceparents: Array<string | undefined> = [];
let http: ReturnType<typeof request>;

beforeAll(async () => {
  startTracing({ serviceName: 'trace-hop-test', record: 'debug' });
  const routes = Router().get('/api/things/:id', (req, res) => {
    traceparents.push(req.header('traceparent'));
    req.log.info('read a thing');
    res.json({ id: req.params.id });
  });
  const app = serviceHttpApp({
    logger: createLogger('things-svc', 'info', logged),
    maxBodyBytes: 1024,
    health,
    identity,
    routes: [routes],
  });
  const started = await listen(app, 0, '127.0.0.1');
  service = started.server;
  http = request(
    createGateway({
      logger: createLogger('gateway', 'info', logged),
      identity,
      authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
      routes: [{ prefixes: ['/api/things'], url: `http://127.0.0.1:${started.port}` }],
    }),
  );
});
afterAll(async () => {
  await closeServer(service);
  await stopTracing();
});

it('sends an unrecorded trace on with the sampled flag off; both hops log its trace id', async () => {
  const auth = `Bearer ${await signDevToken(secret, 'ann')}`;
  const res = await http.get('/api/things/1').set('authorization', auth).set('x-request-id', 'hop-1');
  expect(res.status).toBe(200);
  expect(traceparents).toHaveLength(1);
  const [, traceId, parentId, flags] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparents[0] ?? '') ?? [];
  expect(flags).toBe('00');
  expect(parentId).not.toBe('0000000000000000');
  const ofRequest = lines.filter((l) => l.request_id === 'hop-1');
  // The gateway's access line, the service's own line and its access line: one trace id, the one sent on.
  expect(ofRequest.map((l) => [l.service, l.message]).sort()).toEqual([
    ['gateway', 'request'],
    ['things-svc', 'read a thing'],
    ['things-svc', 'request'],
  ]);
  for (const line of ofRequest) expect(line.trace_id).toBe(traceId);
  traceparents = [];
});
