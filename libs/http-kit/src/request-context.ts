import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@udp/telemetry';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** Path parts that are capabilities (an export key downloads the export): never in a log line. */
const SECRET_PATH = /^(\/api\/data\/export\/(?:public\/)?)[^/?]+/;
export const loggablePath = (url: string) => url.split('?')[0].replace(SECRET_PATH, '$1{key}');

/** The request id: taken from X-Request-Id when well-formed, else new; echoed back in the answer. */
export function takeRequestId(req: Request, res: Response): void {
  const given = req.header('x-request-id');
  req.id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', req.id);
}

/** The first hop's request id (the gateway's); a service takes it in `acceptFromGateway`. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  takeRequestId(req, res);
  next();
}

export interface RequestContextOptions {
  /** More fields for this hop's access line, e.g. the gateway's time spent waiting for the service. */
  accessFields?: (res: Response) => Record<string, unknown>;
}

/** `req.log`, a logger whose every line carries the request id (set before this), and one access line per hop. */
export function requestContext(logger: Logger, options: RequestContextOptions = {}) {
  return (req: Request, res: Response, next: NextFunction) => {
    // Made on first use: most requests never log, and a child logger per request is measurable.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ request_id: req.id }));
    Object.defineProperty(req, 'log', { configurable: true, get: log });
    if (logger.isLevelEnabled('info')) {
      // One access line per hop, from this hop's own logger: in the embedded mode the gateway hands the same
      // request object to the service, whose context replaces `req.log`. The path goes without its query
      // string, which can hold personal data.
      const started = process.hrtime.bigint();
      // Prepended: an inner hop (the in-process service) logs before the outer one, as over HTTP, and its time
      // does not include the outer hop's log write.
      res.prependOnceListener('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const fields = { method: req.method, path: loggablePath(req.originalUrl), status: res.statusCode, ms: Math.round(ms * 10) / 10 };
        log().info({ ...fields, ...options.accessFields?.(res) }, 'request');
      });
    }
    next();
  };
}
