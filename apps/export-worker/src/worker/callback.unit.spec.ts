import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import {
  CallbackRefused,
  type Resolver,
  checkCallbackUrl,
  deliverCallback,
  isSpecialAddress,
  parseAllowedHosts,
  postCallback,
} from './callback';

/** Names resolved by the test, never by DNS: each maps to the addresses an attacker (or a partner) might serve. */
const names: Record<string, string[]> = {
  'partner.example': ['93.184.215.14'],
  'internal.example': ['10.0.0.5'],
  'mixed.example': ['93.184.215.14', '192.168.1.10'],
  'metadata.example': ['169.254.169.254'],
  'v6-loopback.example': ['::1'],
  'receiver.test': ['127.0.0.1'],
};
const resolve: Resolver = async (host) => {
  const found = names[host];
  if (!found) throw new Error('ENOTFOUND');
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

let server: Server;
let port: number;
const hits: Array<{ url: string; signature: string; body: string }> = [];
let failuresLeft = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ url: req.url ?? '', signature: String(req.headers['x-signature']), body });
      if (req.url === '/redirect') return void res.writeHead(307, { location: `http://127.0.0.1:${port}/landed` }).end();
      if (failuresLeft-- > 0) return void res.writeHead(503).end();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise((r) => server.close(r)));

const allowed = () =>
  parseAllowedHosts(
    `partner.example, internal.example, mixed.example, metadata.example, v6-loopback.example, 127.0.0.1, [::1], 10.1.2.3:8443, http://receiver.test:${port}, http://127.0.0.1:${port}`,
  );
const refusedWith = async (url: string, pattern: RegExp) => {
  const error = await checkCallbackUrl(url, allowed(), resolve).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CallbackRefused);
  expect([url, (error as Error).message]).toEqual([url, expect.stringMatching(pattern)]);
};

describe('callback addresses', () => {
  it('accepts a listed https host whose addresses are all public, and an explicitly listed http://host:port', async () => {
    expect(await checkCallbackUrl('https://partner.example/hooks/export?x=1', allowed(), resolve)).toMatchObject({
      address: '93.184.215.14',
    });
    expect(await checkCallbackUrl(`http://receiver.test:${port}/hook`, allowed(), resolve)).toMatchObject({ address: '127.0.0.1' });
  });

  it('refuses loopback, private, link-local and other internal addresses, even when listed for https', async () => {
    await refusedWith('https://127.0.0.1/hook', /internal address/);
    await refusedWith('https://[::1]/hook', /internal address/);
    await refusedWith('https://10.1.2.3:8443/hook', /internal address/);
    await refusedWith('https://internal.example/hook', /internal address/);
    await refusedWith('https://metadata.example/latest/meta-data', /internal address/);
    await refusedWith('https://v6-loopback.example/hook', /internal address/);
  });

  it('refuses a listed name when any of its addresses is internal', async () => {
    await refusedWith('https://mixed.example/hook', /internal address/);
  });

  it('refuses unlisted hosts and ports, and names that do not resolve', async () => {
    await refusedWith('https://evil.example/hook', /not allowed/);
    await refusedWith('https://partner.example:8443/hook', /not allowed/);
    await refusedWith('https://partner.example.evil.example/hook', /not allowed/);
    await refusedWith(`http://127.0.0.1:${port + 1}/hook`, /not allowed|https/);
    expect(
      await checkCallbackUrl('https://partner.example/x', parseAllowedHosts('http://partner.example:8080'), resolve).catch((e) => e),
    ).toBeInstanceOf(CallbackRefused);
    await expect(checkCallbackUrl('https://nowhere.example/x', parseAllowedHosts('nowhere.example'), resolve)).rejects.toThrow(
      /does not resolve/,
    );
  });

  it('refuses other schemes, plain http for an https entry, credentials and junk', async () => {
    for (const url of [
      'ftp://partner.example/x',
      'file:///etc/passwd',
      'gopher://partner.example/',
      'javascript:alert(1)',
      'data:text/plain,hi',
    ])
      await refusedWith(url, /https/);
    await refusedWith('http://partner.example/hook', /https/);
    await refusedWith('https://user:pw@partner.example/hook', /credentials/);
    await refusedWith('//partner.example/hook', /absolute/);
  });

  it('classifies addresses (IPv4-mapped IPv6 included)', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ]) {
      expect([a, isSpecialAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['93.184.215.14', '172.32.0.1', '8.8.8.8', '2606:4700::1111']) expect([a, isSpecialAddress(a)]).toEqual([a, false]);
  });

  it('reads EXPORT_CALLBACK_HOSTS and refuses entries that are not host[:port] or http://host:port', () => {
    expect(parseAllowedHosts('a.example, b.example:8443, http://c.example:8080')).toEqual([
      { scheme: 'https', host: 'a.example', port: 443 },
      { scheme: 'https', host: 'b.example', port: 8443 },
      { scheme: 'http', host: 'c.example', port: 8080 },
    ]);
    expect(() => parseAllowedHosts('http://c.example')).toThrow(/port/);
    expect(() => parseAllowedHosts('a.example/path')).toThrow(/only host/);
  });
});

describe('posting a callback', () => {
  const options = () => ({ allowed: allowed(), secret: 's'.repeat(32), resolve });

  it('connects to the address that was checked, and signs the body with HMAC-SHA256', async () => {
    // receiver.test exists only in the test resolver: the request can only reach the server through it.
    await postCallback(`http://receiver.test:${port}/signed`, '{"a":1}', options());
    const hit = hits.find((h) => h.url === '/signed')!;
    expect(hit.body).toBe('{"a":1}');
    expect(hit.signature).toBe(`sha256=${createHmac('sha256', 's'.repeat(32)).update('{"a":1}').digest('hex')}`);
  });

  it('does not follow a redirect', async () => {
    await expect(postCallback(`http://127.0.0.1:${port}/redirect`, '{}', options())).rejects.toThrow(/redirect/);
    expect(hits.some((h) => h.url === '/landed')).toBe(false);
  });

  it('retries with back-off until the receiver answers, and stops at once for a refused address', async () => {
    failuresLeft = 2;
    const delays: number[] = [];
    const sleep = async (ms: number) => void delays.push(ms);
    expect(await deliverCallback(`http://127.0.0.1:${port}/flaky`, '{}', { ...options(), attempts: 5, retryDelayMs: 100, sleep })).toEqual({
      delivered: true,
      attempts: 3,
    });
    // Doubling from 100 ms, each pause drawn in the upper half of its doubled value (jitter).
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(50);
    expect(delays[0]).toBeLessThan(100);
    expect(delays[1]).toBeGreaterThanOrEqual(100);
    expect(delays[1]).toBeLessThan(200);
    expect(
      await deliverCallback('https://internal.example/x', '{}', { ...options(), attempts: 5, retryDelayMs: 100, sleep }),
    ).toMatchObject({ delivered: false, attempts: 1 });
    failuresLeft = 10;
    expect(
      await deliverCallback(`http://127.0.0.1:${port}/down`, '{}', { ...options(), attempts: 3, retryDelayMs: 1, sleep }),
    ).toMatchObject({ delivered: false, attempts: 3, error: 'callback answered 503' });
    failuresLeft = 0;
  });
});
