import type { Express, Request, Response } from 'express';
import { type HealthCheck, runHealthChecks } from './health';
import { sendProblem } from './problem';

/** What readiness asks of a projector (libs/eventsourcing's Projector). */
export interface ReadinessProjector {
  readonly name: string;
  /** A change publisher: its lag is the bus's (a Kafka outage), which must not take the service out of its Service. */
  readonly publishes: boolean;
  healthy(): boolean;
  lag(): Promise<{ events: number; seconds: number }>;
}

/** What /readyz checks: this service's own stores and its read models' projections, never the bus, never another service. */
export interface ReadinessParts {
  store: { ping(): Promise<boolean> };
  readModels: { ping(): Promise<boolean> };
  projectors: ReadinessProjector[];
  /** A read-model projection further behind the store than this fails readiness (PROJECTION_MAX_LAG_S). */
  maxLagSeconds: number;
}

/**
 * The Kubernetes probes, beside `/health/` (the spec's probe, unchanged):
 * - `GET /livez`: 200 while the process runs and answers; it checks no dependency, so a store outage never restarts
 *   a pod (restarting cannot fix a store).
 * - `GET /readyz`: 200 `UP` when this service can serve: its event store and read models answer and its read-model
 *   projections are healthy and at most `maxLagSeconds` behind; else 503 naming each part and each late projection.
 *   Publishers and the bus are left out: while Kafka is down, writes go on and the publishers catch up later.
 */
export function mountProbes(app: Express, parts?: ReadinessParts): void {
  app.get('/livez', (_req: Request, res: Response) => void res.status(200).type('text/plain').send('OK'));
  app.get('/readyz', async (_req: Request, res: Response) => {
    if (!parts) return void res.status(200).type('text/plain').send('UP');
    const late: Record<string, number> = {};
    const checks: Record<string, HealthCheck> = {
      event_store: () => parts.store.ping(),
      read_models: () => parts.readModels.ping(),
      projections: async () => {
        let up = true;
        for (const projector of parts.projectors.filter((p) => !p.publishes)) {
          if (!projector.healthy()) up = false;
          const { seconds } = await projector.lag();
          if (seconds > parts.maxLagSeconds) {
            late[projector.name] = Math.round(seconds);
            up = false;
          }
        }
        return up;
      },
    };
    const status = await runHealthChecks(checks);
    const down = Object.keys(status).filter((name) => status[name] === 'DOWN');
    if (down.length === 0) return void res.status(200).type('text/plain').send('UP');
    const behind = Object.entries(late).map(([name, s]) => `${name} ${s} s behind (PROJECTION_MAX_LAG_S=${parts.maxLagSeconds})`);
    res.setHeader('retry-after', '5');
    sendProblem(res, 503, 'Service Unavailable', `not ready: ${[...down, ...behind].join(', ')}`, {
      checks: status,
      ...(behind.length && { lag_seconds: late }),
    });
  });
}
