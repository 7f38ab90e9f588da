import express, { type Express, type RequestHandler } from 'express';
import type { InternalIdentity } from '@udp/auth';
import type { Logger } from '@udp/telemetry';
import { errorHandler, notFoundHandler } from './error-handler';
import { type ServiceParts, healthRoute, serviceHealthChecks } from './health';
import { type ReadinessParts, mountProbes } from './probes';
import { inOneLayer } from './mount-route';
import { type UserGate, jsonBodies, requireCaller, serviceEdge } from './service-edge';

interface ServiceAppBase {
  logger: Logger;
  maxBodyBytes: number;
  /** The app's name on its metrics (`udp.service`); default: the logger's `service`. */
  service?: string;
  /** What /health/ checks; it answers without credentials. */
  health: ServiceParts;
  /** A read-model projection further behind than this fails /readyz (PROJECTION_MAX_LAG_S; default 60 s). */
  maxProjectionLagSeconds?: number;
  /** Routers anyone may call (the catalogue; an export's download by its key), in order, before the identity check. */
  publicRoutes?: RequestHandler[];
  /** The erasure boundary of the service's callers: a user being erased here is refused (service-edge.ts, UserGate). */
  gate?: UserGate;
}

/** Routers for callers only, with the identity that vouches for them; a service with public routes only has neither. */
type CallerRoutes =
  | {
      /** Every route in `routes` needs a request forwarded by the gateway with this identity (or handed over in process). */
      identity: InternalIdentity;
      /** The service's own routers, in order. */
      routes: RequestHandler[];
    }
  | { identity?: undefined; routes?: undefined };

export type ServiceHttpAppOptions = ServiceAppBase & CallerRoutes;

/**
 * A service's whole HTTP app, the one way to make one: the common edge (request id and caller from the gateway,
 * access line, metrics and span name, path check, JSON-only bodies within a size), /health/ and the probes, the
 * public routes, the identity check, the service's routes, then a problem+json 404 and the one error handler.
 */
export function serviceHttpApp(options: ServiceHttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Before anything that can answer: every request is counted (by the gateway's edge when it was handed over).
  const edge = serviceEdge({ identity: options.identity, logger: options.logger, service: options.service ?? serviceOf(options.logger) });
  app.use(inOneLayer([edge, jsonBodies(options.maxBodyBytes)]));
  app.get('/health/', healthRoute(serviceHealthChecks(options.health)));
  mountProbes(app, readinessOf(options.health, options.maxProjectionLagSeconds));
  for (const routes of options.publicRoutes ?? []) app.use(routes);
  if (options.routes?.length) {
    app.use(requireCaller);
    if (options.gate) app.use(options.gate.check);
    for (const routes of options.routes) app.use(routes);
  }
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

/** The `service` field every line of a logger from createLogger carries. */
export function serviceOf(logger: Logger): string {
  const service = (logger.bindings() as { service?: unknown }).service;
  return typeof service === 'string' ? service : 'unknown';
}

/** /readyz's parts from /health/'s: the same stores and projectors, the bus left out. */
export function readinessOf(parts: ServiceParts, maxLagSeconds = 60): ReadinessParts {
  return { store: parts.store, readModels: parts.readModels, projectors: parts.projectors, maxLagSeconds };
}
