import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { appProcesses } from './app-processes';
import { resourceValue, spansInCollectorFile } from './testing/collector-file';

/**
 * Rates from every call (issue 21), through the real collector (tools/servers/with-otelcol.sh; CI runs it): the
 * gateway and history-svc as separate processes, traces sampled to 5 per endpoint per second. 2,000 reads of one
 * endpoint in about 10 s, over 20 users: the collector's request count for that endpoint (the apps'
 * `http.server.request.duration` histogram, recorded before any sampling) reads exactly 2,000 for each hop, while
 * the traces that reach storage (the collector's file exporter) are far fewer.
 */
const collector = process.env.OTELCOL_OTLP_ENDPOINT;
const metricsUrl = process.env.OTELCOL_METRICS_URL;
const tracesFile = process.env.OTELCOL_TRACES_FILE;
const CALLS = 2000;
const USERS = 20;

if (!collector || !metricsUrl || !tracesFile) {
  reportSkipped('rates from every call', 'OTELCOL_OTLP_ENDPOINT unset: run under tools/servers/with-otelcol.sh (CI does)');
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'udp-observability-'));
  const apps = appProcesses('observability', ['gateway', 'history-svc']);
  const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...baseEnv } = process.env;
  // Our own instance ids: this test's series are told apart from any other process sending to the same collector.
  const instance = (app: string) => `observability-${process.pid}-${app}`;
  const env = (app: string, extra: Record<string, string> = {}) => ({
    ...baseEnv,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    TRACES_PER_ENDPOINT_PER_S: '5',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector,
    OTEL_METRIC_EXPORT_INTERVAL: '1000',
    OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance(app)}`,
    RATE_LIMIT_PER_USER: '1000000000',
    RATE_LIMIT_PER_ADDRESS: '1000000000',
    ...extra,
  });
  let gateway = '';

  beforeAll(async () => {
    apps.build();
    const history = await apps.start('history-svc', env('history-svc'));
    gateway = (await apps.start('gateway', env('gateway', { HISTORY_SVC_URL: history.url }))).url;
  }, 120_000);
  afterAll(async () => {
    await apps.stopAll();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The collector's count of GET /api/history/v2 as one app measured it (every status). */
  const counted = async (app: string) => {
    const text = await (await fetch(metricsUrl)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith('http_server_request_duration_seconds_count{')) continue;
      if (!line.includes(`instance="${instance(app)}"`) || !line.includes('http_route="/api/history/v2"')) continue;
      if (!line.includes('http_request_method="GET"')) continue;
      sum += Number(line.split(' ').pop());
    }
    return sum;
  };

  /** Distinct traces with a history-svc server span of the endpoint in the collector's file exporter output. */
  const storedTraces = () => {
    const traces = new Set<string>();
    for (const span of spansInCollectorFile(tracesFile)) {
      if (resourceValue(span, 'service.instance.id') !== instance('history-svc')) continue;
      if (span.kind === 2 && span.name === 'GET /api/history/v2') traces.add(span.traceId);
    }
    return traces.size;
  };

  it('counts every call of an endpoint while storing only a sample of its traces', async () => {
    const tokens = Array.from({ length: USERS }, (_, i) => apps.tool('token', `observer-${i}`, { ...process.env, DATA_DIR: dataDir }));
    // 2,000 calls in about 10 s: 100 rounds of 20 concurrent calls, one round every 100 ms at most.
    const statuses = new Map<number, number>();
    const began = Date.now();
    for (let round = 0; round < CALLS / USERS; round++) {
      const roundStart = Date.now();
      const answers = await Promise.all(
        tokens.map((token) => fetch(`${gateway}/api/history/v2?limit=10`, { headers: { authorization: `Bearer ${token}` } })),
      );
      for (const a of answers) {
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        await a.arrayBuffer();
      }
      const pause = 100 - (Date.now() - roundStart);
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
    const seconds = (Date.now() - began) / 1000;
    expect(Object.fromEntries(statuses)).toEqual({ 200: CALLS });

    // Both hops count every call: the metrics are exported every second, cumulative.
    let gatewayCount = 0;
    let serviceCount = 0;
    await waitUntil(
      async () => (gatewayCount = await counted('gateway')) >= CALLS && (serviceCount = await counted('history-svc')) >= CALLS,
      30_000,
      `both hops' counts to reach ${CALLS}`,
    ).catch(async (error: Error) => {
      const lines = (await (await fetch(metricsUrl)).text())
        .split('\n')
        .filter((l) => l.startsWith('http_server_request_duration_seconds_count'));
      throw new Error(
        `${error.message} (gateway ${gatewayCount}, history-svc ${serviceCount}); count lines:\n${lines.slice(0, 10).join('\n')}`,
      );
    });
    // Two more exports: nothing beyond the calls made is counted.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    gatewayCount = await counted('gateway');
    serviceCount = await counted('history-svc');

    // The sampled traces: the batch exporter sends within its 5 s delay; wait until the count stops growing.
    let stored = -1;
    await waitUntil(
      async () => {
        const before = stored;
        stored = storedTraces();
        if (stored === before && stored > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return false;
      },
      30_000,
      'the sampled traces in the collector file',
    );
    process.stdout.write(
      `[observability] calls=${CALLS} counted=${serviceCount} gateway_counted=${gatewayCount} stored_traces=${stored} seconds=${seconds.toFixed(1)}\n`,
    );
    expect(serviceCount).toBe(CALLS);
    expect(gatewayCount).toBe(CALLS);
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(200);
  }, 120_000);
}
