import { createHmac } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { backoffDelayMs } from '@udp/retry';

/**
 * Export callbacks without server-side request forgery: only hosts listed in EXPORT_CALLBACK_HOSTS, https
 * unless an entry is written `http://host:port`, every resolved address checked (loopback, private, link-local
 * and other special ranges refused unless the entry is such an explicit http one), the connection made to the
 * address that was checked (no second lookup an attacker could answer differently), and no redirect followed.
 */
export interface AllowedHost {
  scheme: 'https' | 'http';
  host: string;
  port: number;
}

export class CallbackRefused extends Error {
  override readonly name = 'CallbackRefused';
}

/** `host`, `host:port` (https) or `http://host:port` (plain http, internal addresses allowed), comma-separated. */
export function parseAllowedHosts(value: string | undefined): AllowedHost[] {
  if (!value) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const http = entry.toLowerCase().startsWith('http://');
      let url: URL;
      try {
        url = new URL(http ? entry : `https://${entry}`);
      } catch {
        throw new Error(`EXPORT_CALLBACK_HOSTS: "${entry}" is not host[:port] or http://host:port`);
      }
      if (url.pathname !== '/' || url.search || url.username || url.password)
        throw new Error(`EXPORT_CALLBACK_HOSTS: "${entry}" must be only host[:port] or http://host:port`);
      if (http && !url.port) throw new Error(`EXPORT_CALLBACK_HOSTS: "${entry}" must name its port (http://host:port)`);
      return { scheme: http ? 'http' : 'https', host: bare(url.hostname), port: Number(url.port || (http ? 80 : 443)) };
    });
}

const bare = (hostname: string) => hostname.toLowerCase().replace(/^\[|\]$/g, '');

const special = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  special.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
  ['100::', 64],
] as const)
  special.addSubnet(net, prefix, 'ipv6');

/** True for loopback, private, link-local, shared, documentation, multicast and reserved addresses (IPv4-mapped ones too). */
export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return special.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return special.check(mapped[1], 'ipv4');
  return special.check(address, 'ipv6');
}

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;
const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface CheckedCallback {
  url: URL;
  address: string;
  family: number;
}

/** The callback address if it may be called now, with the one address to connect to; else CallbackRefused. */
export async function checkCallbackUrl(raw: string, allowed: AllowedHost[], resolve: Resolver = systemResolver): Promise<CheckedCallback> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackRefused('callbackUrl must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CallbackRefused('callbackUrl must use https');
  if (url.username || url.password) throw new CallbackRefused('callbackUrl must not carry credentials');
  const scheme = url.protocol === 'https:' ? 'https' : 'http';
  const host = bare(url.hostname);
  const port = Number(url.port || (scheme === 'https' ? 443 : 80));
  const entry = allowed.find((a) => a.host === host && a.port === port && a.scheme === scheme);
  if (!entry) {
    const httpsOnly = scheme === 'http' && allowed.some((a) => a.host === host && a.scheme === 'https');
    throw new CallbackRefused(
      httpsOnly ? 'callbackUrl must use https for this host' : `callbackUrl host ${host}:${port} is not allowed (EXPORT_CALLBACK_HOSTS)`,
    );
  }
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new CallbackRefused(`callbackUrl host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new CallbackRefused(`callbackUrl host ${host} does not resolve`);
  // Every address must pass: a name that also resolves to an internal address is refused as a whole.
  if (entry.scheme === 'https' && addresses.some((a) => isSpecialAddress(a.address))) {
    throw new CallbackRefused(`callbackUrl host ${host} resolves to an internal address`);
  }
  return { url, address: addresses[0].address, family: addresses[0].family };
}

export const signature = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export interface CallbackOptions {
  allowed: AllowedHost[];
  secret: string;
  timeoutMs?: number;
  resolve?: Resolver;
}

/** One POST of the body: checked, connected to the checked address, 2xx or an error (a redirect is an error). */
export async function postCallback(raw: string, body: string, options: CallbackOptions): Promise<void> {
  const target = await checkCallbackUrl(raw, options.allowed, options.resolve);
  const client = target.url.protocol === 'https:' ? https : http;
  await new Promise<void>((resolvePromise, reject) => {
    const request = client.request(
      target.url,
      {
        method: 'POST',
        // Connect to the address that was checked; TLS still verifies the certificate for the host name.
        lookup: (_host, opts, callback) =>
          opts.all
            ? (callback as unknown as (e: null, all: object[]) => void)(null, [{ address: target.address, family: target.family }])
            : callback(null, target.address, target.family),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-signature': signature(body, options.secret),
          'user-agent': 'udp-export-worker',
        },
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolvePromise();
        else
          reject(
            new Error(
              status >= 300 && status < 400
                ? `callback answered a redirect (${status}); redirects are not followed`
                : `callback answered ${status}`,
            ),
          );
      },
    );
    request.on('timeout', () => request.destroy(new Error('callback timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

/** Posts with retries and exponential back-off; resolves with the outcome, never throws. */
export async function deliverCallback(
  raw: string,
  body: string,
  options: CallbackOptions & { attempts: number; retryDelayMs: number; sleep?: (ms: number) => Promise<void> },
): Promise<{ delivered: boolean; attempts: number; error?: string }> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
  let error = '';
  for (let attempt = 1; attempt <= options.attempts; attempt++) {
    try {
      await postCallback(raw, body, options);
      return { delivered: true, attempts: attempt };
    } catch (e) {
      error = (e as Error).message;
      // A refused address will not become acceptable by waiting.
      if (e instanceof CallbackRefused) return { delivered: false, attempts: attempt, error };
    }
    if (attempt < options.attempts) await sleep(backoffDelayMs(attempt, { baseMs: options.retryDelayMs, maxMs: 60_000 }));
  }
  return { delivered: false, attempts: options.attempts, error };
}
