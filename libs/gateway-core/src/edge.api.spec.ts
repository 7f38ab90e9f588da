import { EventEmitter, once } from 'node:events';
import http, { type Server } from 'node:http';
import net from 'node:net';
import express from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { acceptFromGateway, requireCaller } from '@udp/http-kit';
import { ConfigError, commonConfigSchema } from '@udp/config';
import { DEFAULT_SERVER_LIMITS, closeServer, listen, serverLimitsOf, type ServerLimits } from '@udp/runtime';
import { given } from '@udp/test-kit';
import { createLogger } from '@udp/telemetry';
import { createGateway, type GatewayOptions } from './gateway';

/**
 * The public edge through the real gateway on real sockets: CORS for browser apps, rate limits per user and per
 * client address, who the client is behind trusted proxies (and what the services are told), and how long a
 * slow client may hold a connection.
 */
const secret = 's'.repeat(40);
const identity = new InternalIdentity('i'.repeat(32));
const APP = 'https://app.example.com';
const servers: Server[] = [];
let upstreamUrl: string;

/** A service that reads the body, then answers what it was told: the caller's identity and the forwarding headers. */
const echo = express.Router();
echo.use(express.json(), acceptFromGateway(identity), requireCaller, (req, res) =>
  res.json({
    userId: res.locals.userId,
    forwardedFor: req.header('x-forwarded-for') ?? null,
    forwarded: req.header('forwarded') ?? null,
    forwardedProto: req.header('x-forwarded-proto') ?? null,
    realIp: req.header('x-real-ip') ?? null,
  }),
);

/** Requests the service is still receiving: each arrives here and leaves when the service's side of it closes. */
const receiving = new EventEmitter();

beforeAll(async () => {
  const upstream = express();
  upstream.use('/api/watched', (req, _res) => {
    receiving.emit('arrived');
    req.once('close', () => receiving.emit('closed'));
  });
  upstream.use(echo);
  const started = await listen(upstream, 0, '127.0.0.1');
  servers.push(started.server);
  upstreamUrl = `http://127.0.0.1:${started.port}`;
});
afterAll(async () => {
  for (const server of servers) await closeServer(server);
});

/** A gateway listening on loopback, routing `/api/me` over HTTP and `/api/inproc` in process to the echo service. */
async function gateway(
  options: Partial<GatewayOptions> = {},
  limits: ServerLimits = DEFAULT_SERVER_LIMITS,
  log?: { warn: (...args: unknown[]) => void },
) {
  const app = createGateway({
    logger: createLogger('test', 'silent'),
    identity,
    authenticator: new Authenticator({ jwtSecret: secret, issuer: DEV_ISSUER }),
    routes: [
      { prefixes: ['/api/me', '/api/watched'], url: upstreamUrl },
      { prefixes: ['/api/inproc'], url: 'http://in-process.invalid', handler: echo },
    ],
    ...options,
  });
  const { server, port } = await listen(app, 0, '127.0.0.1', limits, log);
  servers.push(server);
  return { server, port, http: request(`http://127.0.0.1:${port}`) };
}
/** A browser's CORS preflight from `origin` for a `method` request to `path`, asking for `headers` when given. */
const preflight = (http: request.Agent, path: string, origin: string, method: string, headers?: string) => {
  const test = http.options(path).set('origin', origin).set('access-control-request-method', method);
  return headers === undefined ? test : test.set('access-control-request-headers', headers);
};
const bearer = async (userId: string) => `Bearer ${await signDevToken(secret, userId)}`;
const nothing = () => undefined;

describe('CORS for browser apps (CORS_ORIGINS)', () => {
  describe('given the gateway allows https://app.example.com', () => {
    let http: request.Agent;
    /** The gateway allowing APP: the state every test here starts from. */
    beforeAll(async () => ({ http } = await gateway({ corsOrigins: [APP] })));

    it('when that origin sends a preflight, then the gateway answers it 204 with the methods and headers, credentials allowed', async () => {
      await given(nothing)
        .when(() => preflight(http, '/api/me', APP, 'POST', 'authorization,content-type,token-type,traceparent'))
        .then((res) => {
          expect(res.status).toBe(204);
          expect(res.headers['access-control-allow-origin']).toBe(APP);
          expect(res.headers['access-control-allow-credentials']).toBe('true');
          expect(res.headers['access-control-allow-methods']).toBe('GET,HEAD,POST,PUT,DELETE');
          const allowedHeaders = res.headers['access-control-allow-headers'].toLowerCase().split(',');
          expect(allowedHeaders).toEqual(expect.arrayContaining(['authorization', 'content-type', 'token-type', 'traceparent']));
          expect(res.headers['access-control-max-age']).toBe('600');
          expect(res.headers.vary).toMatch(/Origin/);
        });
    });

    it('when it asks for X-Service-Debug-Secret, then that header is not among the allowed ones (no debug block from a browser)', async () => {
      await given(nothing)
        .when(() => preflight(http, '/api/v1/zzebu/continue_watching', APP, 'GET', 'x-service-debug-secret'))
        .then((res) => {
          expect(res.status).toBe(204);
          expect(res.headers['access-control-allow-headers'].toLowerCase()).not.toContain('x-service-debug-secret');
        });
    });

    it('when another origin sends a preflight, then it is refused 403 without any CORS header', async () => {
      await given(nothing)
        .when(() => preflight(http, '/api/me', 'https://evil.example', 'POST', 'authorization'))
        .then((res) => {
          expect(res.status).toBe(403);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body.detail).toMatch(/CORS_ORIGINS/);
          expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
        });
    });

    it('when that origin calls, then the answer carries the origin, credentials and the exposed headers', async () => {
      await given(() => bearer('alice'))
        .when((alice) => http.get('/api/me').set('origin', APP).set('authorization', alice))
        .then((res) => {
          expect(res.status).toBe(200);
          expect(res.body.userId).toBe('alice');
          expect(res.headers['access-control-allow-origin']).toBe(APP);
          expect(res.headers['access-control-allow-credentials']).toBe('true');
          expect(res.headers['access-control-expose-headers'].split(',')).toEqual(expect.arrayContaining(['Retry-After', 'X-Request-Id']));
          expect(res.headers.vary).toMatch(/Origin/);
        });
    });

    it('when another origin calls, then the answer has no CORS header (the browser keeps it from the page) and varies by Origin', async () => {
      await given(() => bearer('alice'))
        .when((alice) => http.get('/api/me').set('origin', 'https://evil.example').set('authorization', alice))
        .then((res) => {
          expect(res.status).toBe(200);
          expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
          expect(res.headers.vary).toMatch(/Origin/);
        });
    });
  });

  it('given CORS_ORIGINS=*, any origin may call, never with credentials', async () => {
    const { http } = await gateway({ corsOrigins: ['*'] });
    await given(nothing)
      .when(() => preflight(http, '/api/me', 'https://any.example', 'GET'))
      .then((answer) => {
        expect(answer.status).toBe(204);
        expect(answer.headers['access-control-allow-origin']).toBe('*');
        expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
      });
    await given(nothing)
      .when(() => http.get('/openapi.json').set('origin', 'https://any.example'))
      .then((call) => {
        expect(call.headers['access-control-allow-origin']).toBe('*');
        expect(call.headers['access-control-allow-credentials']).toBeUndefined();
      });
  });

  it('given no CORS_ORIGINS (the default), a preflight is refused and no answer carries CORS headers', async () => {
    const { http } = await gateway();
    await given(nothing)
      .when(() => preflight(http, '/api/me', APP, 'GET'))
      .then((answer) => {
        expect(answer.status).toBe(403);
        expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      });
    await given(nothing)
      .when(() => http.get('/openapi.json').set('origin', APP))
      .then((call) => expect(call.headers['access-control-allow-origin']).toBeUndefined());
  });
});

/** The 429 of a rate limit: problem+json of its own type, Retry-After in whole seconds within the window. */
function expectRateLimited(res: request.Response, variable: string, windowS: number) {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'https://problems.udp.example/rate-limited', title: 'Rate Limited', status: 429 });
  expect(res.body.detail).toContain(variable);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowS).toBe(true);
}

describe('rate limits', () => {
  it('given 3 requests per user per minute, when alice sends a 4th, then 429 rate-limited with Retry-After; bob is not affected', async () => {
    const { http } = await gateway({ rateLimits: { windowS: 60, perUser: 3, perAddress: 1000 } });
    const alice = await bearer('alice');
    await given(async () => {
      for (let i = 0; i < 3; i++) expect((await http.get('/api/me').set('authorization', alice)).status).toBe(200);
    })
      .when(() => http.get('/api/me').set('authorization', alice))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_USER', 60));
    // One quota per user across services (in-process ones too), and none for the public documents.
    await given(nothing)
      .when(() => http.get('/api/inproc').set('authorization', alice))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_USER', 60));
    await given(nothing)
      .when(() => http.get('/openapi.json').set('authorization', alice))
      .then((res) => expect(res.status).toBe(200));
    await given(() => bearer('bob'))
      .when((bob) => http.get('/api/me').set('authorization', bob))
      .then((res) => expect(res.status).toBe(200));
  });

  it('given 2 requests per user per second, when the window that refused alice ends, then she is served again, 2 more times', async () => {
    const { http } = await gateway({ rateLimits: { windowS: 1, perUser: 2, perAddress: 1000 } });
    const alice = await bearer('alice');
    const status = async () => (await http.get('/api/me').set('authorization', alice)).status;
    await given(async () => {
      expect([await status(), await status()]).toEqual([200, 200]);
      expectRateLimited(await http.get('/api/me').set('authorization', alice), 'RATE_LIMIT_PER_USER', 1);
    })
      // The window is one second from alice's first request: poll until it has ended (at most 3 s).
      .when(async () => {
        const deadline = Date.now() + 3000;
        let first = await status();
        while (first === 429 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          first = await status();
        }
        return [first, await status(), await status()];
      })
      .then((statuses) => expect(statuses).toEqual([200, 200, 429]));
  });

  it('given 3 requests per address per minute, when a 4th comes from that address without credentials, then 429 rate-limited', async () => {
    const { http } = await gateway({ rateLimits: { windowS: 60, perUser: 0, perAddress: 3 } });
    await given(async () => {
      expect((await http.get('/api/me')).status).toBe(401);
      expect((await http.get('/openapi.json')).status).toBe(200);
      expect((await http.get('/api/me').set('authorization', 'Bearer nonsense')).status).toBe(401);
    })
      .when(() => http.get('/api/me'))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_ADDRESS', 60));
    await given(nothing)
      .when(() => http.get('/openapi.json'))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_ADDRESS', 60));
  });

  it("given the user's devices used up both limits, an erasure request (DELETE /api/data) still passes, and meets its own budget only", async () => {
    const erasureRoute = { prefixes: ['/api/data'], url: upstreamUrl };
    const { http } = await gateway({
      routes: [{ prefixes: ['/api/me'], url: upstreamUrl }, erasureRoute],
      rateLimits: { windowS: 60, perUser: 3, perAddress: 5, erasurePerUser: 2 },
    });
    const alice = await bearer('alice');
    await given(async () => {
      // The devices' traffic: 3 pass, then the user's limit, then the address's.
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await http.get('/api/me').set('authorization', alice)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      expectRateLimited(await http.get('/api/data/export').set('authorization', alice), 'RATE_LIMIT_PER_ADDRESS', 60);
    })
      .when(() => http.delete('/api/data').set('authorization', alice))
      .then((res) => {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ userId: 'alice' });
      });
    // Without valid credentials it is any request: the address's limit holds.
    await given(nothing)
      .when(() => http.delete('/api/data').set('authorization', 'Bearer nonsense'))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_ADDRESS', 60));
    // Its own budget: 2 per window per user, whatever the spelling of the path.
    await given(async () => expect((await http.delete('/API/data/').set('authorization', alice)).status).toBe(200))
      .when(() => http.delete('/api/data').set('authorization', alice))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_ERASURE_PER_USER', 60));
  });

  it('given CORS, a 429 is readable by the browser app (CORS headers, Retry-After exposed)', async () => {
    const { http } = await gateway({ corsOrigins: [APP], rateLimits: { windowS: 60, perUser: 0, perAddress: 1 } });
    await given(() => http.get('/openapi.json'))
      .when(() => http.get('/openapi.json').set('origin', APP))
      .then((res) => {
        expect(res.status).toBe(429);
        expect(res.headers['access-control-allow-origin']).toBe(APP);
        expect(res.headers['access-control-expose-headers']).toContain('Retry-After');
      });
  });
});

describe('the client address behind proxies (TRUSTED_PROXIES)', () => {
  it('given the peer is a trusted proxy, X-Forwarded-For names the client: each client has its own address limit', async () => {
    const { http } = await gateway({ trustedProxies: ['loopback'], rateLimits: { windowS: 60, perUser: 0, perAddress: 2 } });
    const from = (client: string) => http.get('/openapi.json').set('x-forwarded-for', client);
    await given(async () => {
      expect((await from('203.0.113.1')).status).toBe(200);
      expect((await from('203.0.113.1')).status).toBe(200);
    })
      .when(() => from('203.0.113.1'))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_ADDRESS', 60));
    await given(nothing)
      .when(() => from('203.0.113.2'))
      .then((res) => expect(res.status).toBe(200));
  });

  it('given the peer is not trusted (the default), its X-Forwarded-For is ignored: changing it does not escape the limit', async () => {
    const { http } = await gateway({ rateLimits: { windowS: 60, perUser: 0, perAddress: 2 } });
    const from = (client: string) => http.get('/openapi.json').set('x-forwarded-for', client);
    await given(async () => {
      expect((await from('203.0.113.1')).status).toBe(200);
      expect((await from('203.0.113.2')).status).toBe(200);
    })
      .when(() => from('203.0.113.3'))
      .then((res) => expectRateLimited(res, 'RATE_LIMIT_PER_ADDRESS', 60));
  });

  /** What the echo service behind `path` is told of alice's request sent with `claimed` headers, through a gateway with `options`. */
  const toldTheService = async (options: Partial<GatewayOptions>, path: string, claimed: Record<string, string>) => {
    const { http } = await gateway(options);
    return (
      await http
        .get(path)
        .set('authorization', await bearer('alice'))
        .set(claimed)
    ).body;
  };

  it.each(['/api/me', '/api/inproc'])(
    'given a trusted proxy, %s is told the client and the proxy chain (X-Forwarded-For, Forwarded), not what the client made up',
    async (path) => {
      await given(nothing)
        .when(() =>
          toldTheService({ trustedProxies: ['127.0.0.1'] }, path, {
            // 198.51.100.66 is what the client wrote itself; 203.0.113.9 is what the trusted proxy saw.
            'x-forwarded-for': '198.51.100.66, 203.0.113.9',
            'x-forwarded-proto': 'https',
            'x-real-ip': '198.51.100.66',
          }),
        )
        .then((told) =>
          expect(told).toEqual({
            userId: 'alice',
            forwardedFor: '203.0.113.9, 127.0.0.1',
            forwarded: 'for=203.0.113.9;proto=https, for=127.0.0.1',
            forwardedProto: 'https',
            realIp: null,
          }),
        );
    },
  );

  it('given a client inside the trusted range, what it writes that is no address reaches the service as `unknown`', async () => {
    await given(nothing)
      .when(() => toldTheService({ trustedProxies: ['loopback'] }, '/api/me', { 'x-forwarded-for': 'x;proto=https;by=evil, 127.0.0.1' }))
      .then((told) =>
        expect(told).toMatchObject({
          forwardedFor: 'unknown, 127.0.0.1, 127.0.0.1',
          forwarded: 'for=unknown;proto=http, for=127.0.0.1, for=127.0.0.1',
        }),
      );
  });

  it.each(['/api/me', '/api/inproc'])('given no trusted proxy, %s is told the peer only, whatever the client claims', async (path) => {
    await given(nothing)
      .when(() =>
        toldTheService({}, path, {
          'x-forwarded-for': '198.51.100.66',
          forwarded: 'for=198.51.100.66;proto=https',
          'x-forwarded-proto': 'https',
        }),
      )
      .then((told) =>
        expect(told).toEqual({
          userId: 'alice',
          forwardedFor: '127.0.0.1',
          forwarded: 'for=127.0.0.1;proto=http',
          forwardedProto: 'http',
          realIp: null,
        }),
      );
  });
});

/** Opens a raw connection, writes `text`, and resolves when the server closes it: what it answered, and when. */
function rawExchange(port: number, text: string): Promise<{ answer: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, ms: performance.now() - started }));
  });
}

/**
 * Opens `count` idle connections from `localAddress` (a loopback address: Linux answers all of 127/8) one after
 * another, and says which of them the server dropped (it closed them as it accepted them, or never accepted them)
 * and which it holds, by the client port the server saw.
 */
async function idleFlood(server: Server, port: number, localAddress: string, count: number) {
  const seen = new Map<number, boolean>();
  const waiting = new Map<number, () => void>();
  const decided = (remotePort: number, dropped: boolean) => {
    seen.set(remotePort, dropped);
    waiting.get(remotePort)?.();
  };
  // Listening after listen()'s own checks, so `destroyed` says whether they closed the connection.
  const onConnection = (socket: net.Socket) => decided(socket.remotePort!, socket.destroyed);
  const onDrop = (peer: { remotePort?: number }) => decided(peer.remotePort!, true);
  server.on('connection', onConnection).on('drop', onDrop);
  const sockets: { socket: net.Socket; localPort: number }[] = [];
  for (let i = 0; i < count; i++) {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    const localPort = socket.localPort!;
    // One at a time: the server has decided on this one before the next is opened.
    if (!seen.has(localPort)) await new Promise<void>((resolve) => waiting.set(localPort, resolve));
    sockets.push({ socket, localPort });
  }
  server.off('connection', onConnection).off('drop', onDrop);
  const where = (dropped: boolean) => sockets.filter(({ localPort }) => seen.get(localPort) === dropped).map(({ socket }) => socket);
  return { held: where(false), dropped: where(true) };
}

/** A GET from `localAddress`, on a connection of its own. */
function getFrom(port: number, localAddress: string, path: string, authorization: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ port, host: '127.0.0.1', localAddress, path, agent: false, headers: { authorization } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('slow clients and the connection cap (HTTP_* server limits)', () => {
  const short: ServerLimits = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 5000, maxConnections: 0 };

  it('given a 600 ms request timeout, when a client sends its body slowly, then it gets 408 and the connection is closed at 600 ms', async () => {
    await given(async () => ({ port: (await gateway({}, short)).port, alice: await bearer('alice') }))
      .when(({ port, alice }) =>
        rawExchange(
          port,
          `POST /api/me HTTP/1.1\r\nHost: x\r\nAuthorization: ${alice}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
        ),
      )
      .then(({ answer, ms }) => {
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(ms).toBeGreaterThanOrEqual(590);
        expect(ms).toBeLessThan(3000);
      });
  });

  it('when a client is cut off mid-body, then the request to the service is ended too (it does not wait for the rest)', async () => {
    await given(async () => ({ port: (await gateway({}, short)).port, alice: await bearer('alice') }))
      .when(({ port, alice }) => {
        const arrived = once(receiving, 'arrived');
        const closed = once(receiving, 'closed');
        const cut = rawExchange(
          port,
          `PUT /api/watched HTTP/1.1\r\nHost: x\r\nAuthorization: ${alice}\r\nContent-Length: 100\r\n\r\n{"a":`,
        );
        return { arrived, closed, cut };
      })
      .then(async ({ arrived, closed, cut }) => {
        await arrived;
        expect((await cut).answer).toMatch(/^HTTP\/1\.1 408 /);
        // The service listens with the default limits (60 s): without the gateway ending it, this would wait that long.
        await closed;
      });
  });

  it('given a 300 ms headers timeout, when a client sends its headers slowly, then it gets 408 and the connection is closed at 300 ms', async () => {
    await given(async () => (await gateway({}, short)).port)
      .when((port) => rawExchange(port, 'GET /api/me HTTP/1.1\r\nHost: x\r\n'))
      .then(({ answer, ms }) => {
        expect(answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(ms).toBeGreaterThanOrEqual(290);
        expect(ms).toBeLessThan(3000);
      });
  });

  it('given a cap of 2 connections, a third is dropped while two are open', async () => {
    const warnings: unknown[][] = [];
    await given(async () => {
      const { server, port } = await gateway(
        {},
        { ...short, headersTimeoutMs: 5000, requestTimeoutMs: 5000, maxConnections: 2 },
        { warn: (...args) => warnings.push(args) },
      );
      const accepted = new Promise<void>((resolve) => {
        let count = 0;
        server.on('connection', () => ++count === 2 && resolve());
      });
      const open = [net.connect(port, '127.0.0.1'), net.connect(port, '127.0.0.1')];
      await accepted;
      return { server, port, open };
    })
      .when(async ({ server, port }) => {
        const dropped = once(server, 'drop');
        const third = await rawExchange(port, 'GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n');
        await dropped;
        return third;
      })
      .then(async (third, { server, open }) => {
        expect(third.answer).toBe('');
        for (const socket of open) socket.destroy();
        // The drops of an interval are reported at its end, or when the server closes.
        await closeServer(server);
        expect(warnings).toEqual([
          [
            {
              dropped: 1,
              peers: 1,
              over_max_connections: 1,
              over_max_per_peer: 0,
              max_connections: 2,
              max_connections_per_address: 0,
              max_connections_per_proxy: 0,
            },
            'connections dropped: HTTP_MAX_CONNECTIONS reached',
          ],
        ]);
      });
  });

  it('given a cap of 3 connections per address, when 127.0.0.1 opens 20 idle ones, then 17 are closed, another address is still served, and the warning counts all 17', async () => {
    const warnings: unknown[][] = [];
    await given(async () => {
      // The server's own cap (6) would be full after 6 of the flood without the cap per address.
      const limits = { ...short, headersTimeoutMs: 5000, requestTimeoutMs: 5000, maxConnections: 6, maxConnectionsPerAddress: 3 };
      return gateway({}, limits, { warn: (...args) => warnings.push(args) });
    })
      .when(async ({ server, port }) => {
        const flood = await idleFlood(server, port, '127.0.0.1', 20);
        const other = await getFrom(port, '127.0.0.2', '/api/me', await bearer('alice'));
        return { flood, other };
      })
      .then(async ({ flood, other }, { server }) => {
        expect(other.status).toBe(200);
        expect(JSON.parse(other.body)).toMatchObject({ userId: 'alice' });
        expect(flood.held).toHaveLength(3);
        expect(flood.dropped).toHaveLength(17);
        // Every dropped one is closed at the flooding client's end; the held ones are still open.
        await Promise.all(flood.dropped.map((socket) => (socket.closed ? undefined : once(socket, 'close'))));
        expect(flood.held.every((socket) => !socket.destroyed)).toBe(true);
        for (const socket of flood.held) socket.destroy();
        await closeServer(server);
        expect(warnings).toEqual([
          [
            {
              dropped: 17,
              peers: 1,
              over_max_connections: 0,
              over_max_per_peer: 17,
              max_connections: 6,
              max_connections_per_address: 3,
              max_connections_per_proxy: 0,
            },
            'connections dropped: HTTP_MAX_CONNECTIONS_PER_ADDRESS or _PER_PROXY reached',
          ],
        ]);
      });
  });

  it('given a trusted proxy, when it and a client each open more than their caps, then the proxy keeps its own larger cap', async () => {
    const warnings: unknown[][] = [];
    await given(async () => {
      const limits = { ...short, maxConnectionsPerAddress: 2, maxConnectionsPerProxy: 4 };
      return gateway({ trustedProxies: ['127.0.0.3'] }, limits, { warn: (...args) => warnings.push(args) });
    })
      .when(async ({ server, port }) => ({
        proxy: await idleFlood(server, port, '127.0.0.3', 6),
        client: await idleFlood(server, port, '127.0.0.1', 3),
      }))
      .then(async ({ proxy, client }, { server }) => {
        expect([proxy.held.length, proxy.dropped.length]).toEqual([4, 2]);
        expect([client.held.length, client.dropped.length]).toEqual([2, 1]);
        for (const socket of [...proxy.held, ...client.held]) socket.destroy();
        await closeServer(server);
        expect(warnings).toEqual([[expect.objectContaining({ dropped: 3, peers: 2, over_max_per_peer: 3 }), expect.any(String)]]);
      });
  });

  it('refuses a headers timeout longer than the request timeout at start-up, naming both variables', async () => {
    await given(() => commonConfigSchema.parse({ HTTP_HEADERS_TIMEOUT_MS: '70000', HTTP_REQUEST_TIMEOUT_MS: '60000' }))
      .when((config) => () => serverLimitsOf(config))
      .then((readLimits) => {
        expect(readLimits).toThrow(ConfigError);
        expect(readLimits).toThrow(/HTTP_HEADERS_TIMEOUT_MS.*HTTP_REQUEST_TIMEOUT_MS/);
      });
    expect(DEFAULT_SERVER_LIMITS).toEqual({
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 10_000,
    });
  });
});
