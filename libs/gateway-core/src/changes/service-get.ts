import http from 'node:http';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import { HttpError, type InternalReads } from '@udp/http-kit';

/** A service's answer to one of live sync's pulls: its status, and its JSON when it is a success. */
export interface ServiceAnswer {
  status: number;
  json?: unknown;
}

/** How the hub asks a service for a user's changes, as that user: `GET <baseUrl><path>`. */
export type ServiceGet = (baseUrl: string, path: string, userId: string) => Promise<ServiceAnswer>;

// node:http, not fetch: 10,000 streams opening pull twice each, and fetch's request, response, streams and timeout
// signal per call left the heap of that burst about 190 MiB larger for good (docs/live-sync.md, "Memory"). A keep-alive
// pool of at most 64 connections per service: a burst of openings queues here instead of opening a socket each.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** Over HTTP, with the signed identity header (the distributed mode). */
export function httpServiceGet(identity: InternalIdentity, timeoutMs = 10_000): ServiceGet {
  return (baseUrl, path, userId) =>
    new Promise((resolve, reject) => {
      const headers = { [IDENTITY_HEADER]: identity.sign({ userId }), accept: 'application/json' };
      const req = http.get(`${baseUrl}${path}`, { agent, headers, timeout: timeoutMs }, (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 299) {
          res.resume();
          return resolve({ status });
        }
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          try {
            resolve({ status, json: JSON.parse(body) });
          } catch (error) {
            reject(error as Error);
          }
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
    });
}

/**
 * The services this process runs (the embedded mode), by base URL: their internal reads are called directly, with the
 * caller the service's route would have taken from the identity header, for the same answer without a request, its
 * objects or a loopback hop (about 100 MiB of heap less after 10,000 openings: docs/live-sync.md, "Memory"). A path
 * no read of the service serves, or a service this process does not run, goes over HTTP.
 */
export function inProcessServiceGet(services: Record<string, InternalReads>, overHttp: ServiceGet): ServiceGet {
  return async (baseUrl, path, userId) => {
    const [pathname, search = ''] = path.split('?', 2);
    const read = services[baseUrl]?.[pathname];
    if (!read) return overHttp(baseUrl, path, userId);
    // The answer comes after a turn of the event loop, as over a hop: a stream pulling page after page leaves its turn
    // to its reader's socket (and to every other request) between pages. Without it, 25,000 changes went out in one
    // piece, past CHANGES_MAX_BUFFER_BYTES of a reader that reads as fast as it can, which was closed as slow.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      return { status: 200, json: await read(userId, Object.fromEntries(new URLSearchParams(search))) };
    } catch (error) {
      // A refusal is the route's status (a malformed position is 400); anything else is the service failing.
      if (error instanceof HttpError) return { status: error.status };
      throw error;
    }
  };
}
