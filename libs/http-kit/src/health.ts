import type { Request, Response } from 'express';
import { sendProblem } from './problem';
import type { ReadinessProjector } from './probes';

export type HealthCheck = () => boolean | Promise<boolean>;
export type HealthStatus = 'UP' | 'DOWN';

/** How long one check may take before it counts as DOWN: a store that does not answer is down for us. */
const CHECK_TIMEOUT_MS = 1500;

/** Runs named checks in parallel, each bounded in time; a throw or a timeout is DOWN. */
export async function runHealthChecks(checks: Record<string, HealthCheck>): Promise<Record<string, HealthStatus>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
      });
      const up = await Promise.race([
        Promise.resolve()
          .then(check)
          .catch(() => false),
        timeout,
      ]);
      clearTimeout(timer);
      return [name, up ? 'UP' : 'DOWN'] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * `GET /health/`: 200 `UP` (text, as the spec has it) when every check passes, else 503 problem+json naming
 * each part, e.g. `checks: { event_store: 'UP', read_models: 'DOWN', bus: 'UP', projections: 'UP' }`.
 */
export function healthRoute(checks: Record<string, HealthCheck>) {
  return async (_req: Request, res: Response) => {
    const status = await runHealthChecks(checks);
    const down = Object.keys(status).filter((name) => status[name] === 'DOWN');
    if (down.length === 0) return void res.status(200).type('text/plain').send('UP');
    res.setHeader('retry-after', '5');
    sendProblem(res, 503, 'Service Unavailable', `DOWN: ${down.join(', ')}`, { checks: status });
  };
}

/** The parts of a service /health/ names: what a write and its projections need. */
export interface ServiceParts {
  store: { ping(): Promise<boolean> };
  readModels: { ping(): Promise<boolean> };
  /** Only for services that publish or consume on the bus. */
  bus?: { ping(): Promise<boolean> };
  /** Read models and publishers that follow the event store: DOWN while one keeps failing an event. */
  projectors: ReadinessProjector[];
}

export function serviceHealthChecks(parts: ServiceParts): Record<string, HealthCheck> {
  return {
    event_store: () => parts.store.ping(),
    read_models: () => parts.readModels.ping(),
    ...(parts.bus && { bus: () => parts.bus!.ping() }),
    projections: () => parts.projectors.every((p) => p.healthy()),
  };
}
