import { EventEmitter, once } from 'node:events';
import type { Server } from 'node:http';
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
      .then((third, { open }) => {
        expect(third.answer).toBe('');
        expect(warnings).toEqual([[{ dropped: 1, max_connections: 2 }, 'connections dropped: HTTP_MAX_CONNECTIONS reached']]);
        for (const socket of open) socket.destroy();
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
