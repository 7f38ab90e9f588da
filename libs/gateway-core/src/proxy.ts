import http from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from '@udp/http-kit';

/** Headers a client may not pass on: hop-by-hop ones, credentials, and anything only the gateway may set. */
const DROPPED = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade', 'host',
  'authorization', 'cookie', 'token-type', 'x-udp-identity', 'x-service-debug-secret',
]);

const agent = new http.Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 });

export interface ProxyTarget {
  /** Base address of the service, e.g. http://127.0.0.1:8081 */
  url: string;
  timeoutMs: number;
}

/**
 * Streams the request to the service and its answer back. The service receives the original path and
 * query, the request id, and the headers the gateway adds (`extra`), never the client's credentials.
 */
export function forward(target: ProxyTarget, extra: (req: Request, res: Response) => Record<string, string>) {
  const base = new URL(target.url);
  return (req: Request, res: Response, next: NextFunction) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!DROPPED.has(name)) headers[name] = value;
    Object.assign(headers, extra(req, res), { 'x-request-id': req.id, 'x-forwarded-proto': req.protocol });
    const upstream = http.request(
      { protocol: base.protocol, hostname: base.hostname, port: base.port, method: req.method, path: req.originalUrl, headers, agent, timeout: target.timeoutMs },
      (answer) => {
        res.status(answer.statusCode ?? 502);
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && name !== 'connection' && name !== 'keep-alive') res.setHeader(name, value);
        answer.pipe(res);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new HttpError(504, 'Gateway Timeout', 'the service did not answer in time')));
    upstream.on('error', (error) => {
      if (res.headersSent) return res.destroy(error);
      next(error instanceof HttpError ? error : new HttpError(502, 'Bad Gateway', 'the service is unavailable'));
    });
    req.pipe(upstream);
  };
}

/**
 * The embedded mode's transport: the service runs in this process, so the request goes straight to its
 * handler instead of through a loopback HTTP hop. The service sees the same headers and path as over HTTP
 * (credentials dropped, the signed identity added) and checks them with the same code.
 */
export function dispatchInProcess(handler: RequestHandler, extra: (req: Request, res: Response) => Record<string, string>) {
  return (req: Request, res: Response, next: NextFunction) => {
    for (const name of DROPPED) if (name !== 'host') delete req.headers[name];
    Object.assign(req.headers, extra(req, res), { 'x-request-id': req.id });
    // The gateway mounted this route under a prefix; the service routes on the full path.
    req.url = req.originalUrl;
    handler(req, res, next);
  };
}

/** GET <url>/health/ answers 200 within the timeout. */
export function serviceAnswers(url: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = http.get(`${url.replace(/\/$/, '')}/health/`, { agent, timeout: timeoutMs }, (answer) => {
      answer.resume();
      resolve(answer.statusCode === 200);
    });
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolve(false));
  });
}
