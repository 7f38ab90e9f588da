import http, { type Server } from 'node:http';
import { Authenticator, DEV_ISSUER, IDENTITY_HEADER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { closeServer, listen } from '@udp/runtime';
import { createLogger, startMetrics, stopMetrics } from '@udp/telemetry';
import { collectingReader, waitUntil } from '@udp/test-kit';
import { createGateway } from '../gateway';
import { CursorCodec } from './cursor';
import { inProcessHub } from '../testing/in-process-hub';
import { changesRouter, changesStream } from './routes';
import { TicketIssuer } from './tickets';

/**
 * `GET /api/changes` is served beside the gateway's Express router (createGateway's `streams`): its request still
 * passes the whole edge, and an open stream is seen at the edge as any request is: its request id, the CORS headers,
 * the limit per address, problem+json refusals before it starts, and one access line and one duration data point when
 * it ends. The services behind are two in-process reads that show an empty history and no playlists.
 */
const secret = 's'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const bus = new InProcessBus();
const lines: Array<Record<string, unknown>> = [];
const logger = createLogger('gateway', 'info', { write: (line: string) => void lines.push(JSON.parse(line)) });
const cursors = new CursorCodec(identity.derivedKey('changes-cursor'));
const services = {
  'http://history': { '/internal/history/changes': async () => ({ changes: [], position: '0', applied: 0, behind: 0, more: false }) },
  'http://playlist': { '/internal/playlist/changes': async () => ({ changes: [], applied: 0 }) },
  'http://preference': { '/internal/preference/changes': async () => ({ changes: [], position: '0', applied: '0', more: false }) },
  'http://profile': { '/internal/profile/changes': async () => ({ changes: [], applied: 0 }) },
};
const hub = inProcessHub(
  { bus, identity, cursors, logger, services },
  { limits: { heartbeatS: 15, maxStreamsPerUser: 1, maxStreams: 100, maxBufferBytes: 65536 } },
);
const authenticator = new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER });
const changes = { hub, tickets: new TicketIssuer(identity.derivedKey('changes-ticket')), cursors, authenticator };
const collected = collectingReader();
let server: Server;
let port: number;

beforeAll(async () => {
  startMetrics({ serviceName: 'test', readers: [collected.reader] });
  await hub.start();
  const app = createGateway({
    logger,
    identity,
    authenticator,
    routes: [],
    corsOrigins: ['https://app.example'],
    rateLimits: { windowS: 60, perUser: 0, perAddress: 5 },
    routers: [changesRouter(changes)],
    streams: [changesStream(changes)],
  });
  ({ server, port } = await listen(app, 0, '127.0.0.1'));
});
afterAll(async () => {
  await hub.stop();
  await closeServer(server);
  await bus.close();
  await stopMetrics();
});

interface Opened {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  close(): void;
}

/** Opens `GET /api/changes`; resolves with the answer once it is whole (a refusal) or has its `ready` event (a stream). */
function open(headers: Record<string, string>): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/api/changes', headers, agent: false }, (res) => {
      let body = '';
      const answer = () => ({ status: res.statusCode!, headers: res.headers, body, close: () => req.destroy() });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (body.includes('event: ready')) resolve(answer());
      });
      res.on('end', () => resolve(answer()));
    });
    req.on('error', reject);
  });
}
const accessLines = () => lines.filter((l) => l.message === 'request' && l.path === '/api/changes');

describe('a change stream at the edge, served beside the router', () => {
  it("writes the stream's one access line and its duration data point when it ends, whoever ends it, under its request id", async () => {
    const authorization = `Bearer ${await signDevToken(secret, 'ada')}`;
    const stream = await open({ authorization, origin: 'https://app.example', 'x-request-id': 'stream-1' });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['x-request-id']).toBe('stream-1');
    expect(stream.headers['access-control-allow-origin']).toBe('https://app.example');
    // Open: no access line yet (it says how long the stream lasted).
    expect(accessLines().filter((l) => l.request_id === 'stream-1')).toEqual([]);
    // The user's next stream ends this one (CHANGES_MAX_STREAMS_PER_USER is 1 here): `close`, then the end.
    const next = await open({ authorization, 'x-request-id': 'stream-2' });
    expect(next.status).toBe(200);
    await waitUntil(() => accessLines().some((l) => l.request_id === 'stream-1'), 5000, 'the access line');
    expect(accessLines().filter((l) => l.request_id === 'stream-1')).toEqual([
      expect.objectContaining({ service: 'gateway', method: 'GET', path: '/api/changes', status: 200, ms: expect.any(Number) }),
    ]);
    await waitUntil(async () => (await collected.points('http.server.request.duration')).length > 0, 5000, 'the data point');
    expect(await collected.points('http.server.request.duration')).toContainEqual({
      attributes: expect.objectContaining({ 'http.route': '/api/changes', 'http.response.status_code': 200, 'udp.service': 'gateway' }),
      value: 1,
    });
    // A stream its device leaves (the usual end) has its line too.
    next.close();
    await waitUntil(() => accessLines().some((l) => l.request_id === 'stream-2'), 5000, 'the access line of a stream the client left');
    expect(accessLines().filter((l) => l.request_id === 'stream-2')).toEqual([
      expect.objectContaining({ method: 'GET', path: '/api/changes', status: 200, aborted: true }),
    ]);
    expect(accessLines().find((l) => l.request_id === 'stream-1')).not.toHaveProperty('aborted');
    stream.close();
  });

  it('refuses before the stream starts with problem+json: no credentials, a client identity header, the limit per address', async () => {
    const none = await open({ 'x-request-id': 'refused-1' });
    expect(none.status).toBe(401);
    expect(none.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(none.headers['x-request-id']).toBe('refused-1');
    const forged = await open({ authorization: `Bearer ${await signDevToken(secret, 'bob')}`, [IDENTITY_HEADER]: 'v1.forged' });
    expect(forged.status).toBe(400);
    expect(JSON.parse(forged.body).errors).toEqual([{ field: IDENTITY_HEADER, message: expect.any(String) }]);
    // 5 per address in the window: the first test's two streams and the two refusals above took four.
    const authorization = `Bearer ${await signDevToken(secret, 'cy')}`;
    const fifth = await open({ authorization });
    expect(fifth.status).toBe(200);
    fifth.close();
    const sixth = await open({ authorization });
    expect(sixth.status).toBe(429);
    expect(sixth.headers['content-type']).toMatch(/application\/problem\+json/);
    await waitUntil(() => accessLines().some((l) => l.status === 429), 5000, 'the refusal access line');
    expect(accessLines().find((l) => l.request_id === 'refused-1')).toMatchObject({ status: 401 });
  });
});
