import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSecret, signDevToken } from '@udp/auth';
import { start } from './host';

/**
 * The public edge as the gateway's configuration wires it (apps/gateway/src/main.ts), on the embedded host: CORS
 * from CORS_ORIGINS, the rate limits from RATE_LIMIT_*, the client address from TRUSTED_PROXIES, the server limits
 * from HTTP_*. The behaviour in detail is libs/gateway-core/src/edge.api.spec.ts.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'udp-edge-'));
const APP = 'https://app.example.com';
let system: { port: number; stop(): Promise<void> };
let base = '';

beforeAll(async () => {
  system = await start(
    {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      CORS_ORIGINS: APP,
      TRUSTED_PROXIES: 'loopback',
      RATE_LIMIT_WINDOW_S: '60',
      RATE_LIMIT_PER_USER: '2',
      RATE_LIMIT_PER_ADDRESS: '3',
      HTTP_HEADERS_TIMEOUT_MS: '300',
      HTTP_REQUEST_TIMEOUT_MS: '600',
    },
    { announce: false },
  );
  base = `http://127.0.0.1:${system.port}`;
}, 60_000);
afterAll(async () => {
  await system?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const bearer = async (userId: string) => `Bearer ${await signDevToken(fileSecret(dataDir, 'jwt-signing'), userId)}`;
/** Each test speaks as its own client address (the trusted loopback proxy says so), apart from the others' counts. */
const from = (client: string, headers: Record<string, string> = {}) => ({ ...headers, 'x-forwarded-for': client });

it('answers a preflight of a CORS_ORIGINS origin', async () => {
  const res = await fetch(`${base}/api/history/v2`, {
    method: 'OPTIONS',
    headers: from('203.0.113.1', { origin: APP, 'access-control-request-method': 'POST' }),
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe(APP);
});

it('limits a user to RATE_LIMIT_PER_USER requests per RATE_LIMIT_WINDOW_S', async () => {
  const headers = from('203.0.113.2', { authorization: await bearer('alice') });
  for (let i = 0; i < 2; i++) expect((await fetch(`${base}/api/history/v2`, { headers })).status).toBe(200);
  const limited = await fetch(`${base}/api/history/v2`, { headers });
  expect(limited.status).toBe(429);
  expect(((await limited.json()) as { type: string }).type).toBe('https://problems.udp.example/rate-limited');
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
});

it('limits a client address (behind the trusted proxy) to RATE_LIMIT_PER_ADDRESS requests', async () => {
  for (let i = 0; i < 3; i++) expect((await fetch(`${base}/openapi.json`, { headers: from('203.0.113.3') })).status).toBe(200);
  expect((await fetch(`${base}/openapi.json`, { headers: from('203.0.113.3') })).status).toBe(429);
  expect((await fetch(`${base}/openapi.json`, { headers: from('203.0.113.4') })).status).toBe(200);
});

it('cuts off a client that sends its body slower than HTTP_REQUEST_TIMEOUT_MS', async () => {
  const authorization = await bearer('bob');
  const started = performance.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(system.port, '127.0.0.1', () =>
      socket.write(
        `POST /api/history/v2 HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.5\r\nAuthorization: ${authorization}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"item_id":',
      ),
    );
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(performance.now() - started).toBeGreaterThanOrEqual(590);
});
