import express, { type Express, type Request, type RequestHandler, type Response, type NextFunction } from 'express';
import { AuthenticationError, IDENTITY_HEADER, type Authenticator, type InternalIdentity } from '@udp/auth';
import { buildOpenApiDocument } from '@udp/contracts';
import { errorHandler, HttpError, notFoundHandler, requestContext, unauthorized } from '@udp/http-kit';
import type { Logger } from '@udp/telemetry';
import { docsPage } from './docs-page';
import { dispatchInProcess, forward, serviceAnswers } from './proxy';

export interface ServiceRoute {
  /** Path prefixes this service owns, e.g. ['/api/history']. */
  prefixes: string[];
  url: string;
  /** Public routes (the QC catalogue) need no credentials. */
  public?: boolean;
  /** The service's handler when it runs in this process (embedded mode): requests skip the HTTP hop. */
  handler?: RequestHandler;
}

export interface GatewayOptions {
  routes: ServiceRoute[];
  authenticator: Authenticator;
  identity: InternalIdentity;
  logger: Logger;
  upstreamTimeoutMs?: number;
}

/**
 * The public HTTP surface: authenticates the caller, vouches for it to the services with a signed identity
 * header, forwards `/api/...` by prefix, and serves `/health/`, `/openapi.json` and `/docs`.
 */
export function createGateway(options: GatewayOptions): Express {
  const { routes, authenticator, identity, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(logger));

  app.get('/health/', async (_req, res) => {
    const answers = await Promise.all(routes.map((r) => serviceAnswers(r.url)));
    const up = answers.every(Boolean);
    res.status(up ? 200 : 503).type('text/plain').send(up ? 'UP' : 'DOWN');
  });
  const openapi = JSON.stringify(buildOpenApiDocument());
  app.get('/openapi.json', (_req, res) => res.type('application/json').send(openapi));
  app.use(docsPage());

  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const caller = await authenticator.authenticate(req.header('authorization'), req.header('token-type'));
      res.locals.identity = identity.sign(caller);
      next();
    } catch (error) {
      next(error instanceof AuthenticationError ? unauthorized(error.message) : new HttpError(503, 'Service Unavailable', 'cannot verify credentials now'));
    }
  };

  for (const route of routes) {
    const vouch = (_req: Request, res: Response): Record<string, string> =>
      res.locals.identity ? { [IDENTITY_HEADER]: res.locals.identity as string } : {};
    const proxy = route.handler
      ? dispatchInProcess(route.handler, vouch)
      : forward({ url: route.url, timeoutMs: options.upstreamTimeoutMs ?? 30_000 }, vouch);
    for (const prefix of route.prefixes) {
      app.use(prefix, ...(route.public ? [proxy] : [authenticate, proxy]));
    }
  }

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
