import request from 'supertest';
import { InternalIdentity } from '@udp/auth';
import { createLogger } from '@udp/telemetry';
import type { ReadinessProjector } from './probes';
import { serviceHttpApp } from './service-app';

const up = { ping: async () => true };
const down = { ping: async () => false };
const projector = (name: string, seconds: number, options: { publishes?: boolean; healthy?: boolean } = {}): ReadinessProjector => ({
  name,
  publishes: options.publishes ?? false,
  healthy: () => options.healthy ?? true,
  lag: async () => ({ events: seconds > 0 ? 5 : 0, seconds }),
});

function app(parts: { store?: typeof up; readModels?: typeof up; bus?: typeof up; projectors?: ReadinessProjector[] }) {
  return serviceHttpApp({
    logger: createLogger('probe-test', 'silent'),
    maxBodyBytes: 1024,
    identity: new InternalIdentity('k'.repeat(32)),
    routes: [],
    maxProjectionLagSeconds: 30,
    health: { store: parts.store ?? up, readModels: parts.readModels ?? up, bus: parts.bus, projectors: parts.projectors ?? [] },
  });
}

describe('/livez and /readyz', () => {
  it('are both up when every part is', async () => {
    const a = app({ bus: up, projectors: [projector('view', 0.2), projector('changes', 0, { publishes: true })] });
    expect((await request(a).get('/livez')).status).toBe(200);
    const ready = await request(a).get('/readyz');
    expect([ready.status, ready.text]).toEqual([200, 'UP']);
  });

  it('keep the process alive and out of its Service while a store is down', async () => {
    const a = app({ store: down });
    expect((await request(a).get('/livez')).status).toBe(200);
    const ready = await request(a).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      detail: 'not ready: event_store',
      checks: { event_store: 'DOWN', read_models: 'UP', projections: 'UP' },
    });
    expect(ready.headers['retry-after']).toBe('5');
  });

  it('stay ready while the bus is down and a publisher falls behind (writes go on; /health/ says DOWN)', async () => {
    const a = app({ bus: down, projectors: [projector('view', 0), projector('changes', 600, { publishes: true })] });
    expect((await request(a).get('/readyz')).status).toBe(200);
    expect((await request(a).get('/health/')).status).toBe(503);
  });

  it('say which read-model projection is too far behind, and that a failing one is not ready', async () => {
    const late = await request(app({ projectors: [projector('view', 75.4), projector('other', 1)] })).get('/readyz');
    expect(late.status).toBe(503);
    expect(late.body).toMatchObject({
      detail: 'not ready: projections, view 75 s behind (PROJECTION_MAX_LAG_S=30)',
      lag_seconds: { view: 75 },
    });
    const failing = await request(app({ projectors: [projector('view', 0, { healthy: false })] })).get('/readyz');
    expect(failing.status).toBe(503);
    expect(failing.body.checks).toMatchObject({ projections: 'DOWN' });
  });
});
