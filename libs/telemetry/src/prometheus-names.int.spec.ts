import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { METRICS, type MetricEntry } from './metrics-catalogue';
import { prometheusName } from './prometheus-names';

/**
 * The naming rule (prometheus-names.ts) against the real collector (tools/servers/with-otelcol.sh, deploy/otel-collector.yaml):
 * one data point of every catalogue entry, plus a counter, an up-down counter and a millisecond histogram the rule
 * also covers, sent over OTLP/http; the metric families the collector's prometheus exporter then shows for this
 * service must be exactly the names the rule predicts. A change of the exporter's translation settings fails here.
 */
const collector = process.env.OTELCOL_OTLP_ENDPOINT;
const metricsUrl = process.env.OTELCOL_METRICS_URL;
const root = join(__dirname, '..', '..', '..');
const service = `names-probe-${process.pid}`;

// Sent by a child process: the OTLP exporter loads its transport with a dynamic import, which jest's VM refuses.
const sender = `
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http');
const { resourceFromAttributes } = require('@opentelemetry/resources');
(async () => {
  const [url, service, metrics] = [process.argv[1], process.argv[2], JSON.parse(process.argv[3])];
  const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url }), exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': service }), readers: [reader] });
  const meter = provider.getMeter('names-probe');
  for (const m of metrics) {
    const options = { unit: m.unit, description: m.description };
    if (m.kind === 'histogram') meter.createHistogram(m.name, options).record(0.5, { 'http.route': '/probe' });
    else if (m.kind === 'counter') meter.createCounter(m.name, options).add(1);
    else if (m.kind === 'updowncounter') meter.createUpDownCounter(m.name, options).add(1);
    else meter.createObservableGauge(m.name, options).addCallback((r) => r.observe(3));
  }
  await provider.shutdown();
})().catch((e) => { console.error(e); process.exit(1); });
`;

const extra: MetricEntry[] = [
  { name: 'udp.probe.sent', kind: 'counter', unit: '{message}', description: 'rule check: a counter' },
  { name: 'udp.probe.open', kind: 'updowncounter', unit: '{connection}', description: 'rule check: an up-down counter' },
  { name: 'udp.probe.wait', kind: 'histogram', unit: 'ms', description: 'rule check: milliseconds' },
];

if (!collector || !metricsUrl) {
  reportSkipped(
    'Prometheus names through the real collector',
    'OTELCOL_OTLP_ENDPOINT and OTELCOL_METRICS_URL unset: run under tools/servers/with-otelcol.sh (CI does)',
  );
} else {
  it('shows every catalogue metric under the name prometheusName predicts, and no other', async () => {
    const sent = [...Object.values(METRICS), ...extra];
    execFileSync(process.execPath, ['-e', sender, `${collector}/v1/metrics`, service, JSON.stringify(sent)], {
      cwd: root,
      stdio: 'inherit',
    });

    // Metric families (`# TYPE <name> <type>`) with a series of this service (job = service.name).
    const families = async () => {
      const text = await (await fetch(metricsUrl)).text();
      const types = new Map<string, string>();
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1], m[2]);
      const ours = new Map<string, string>();
      for (const [name, type] of types) {
        const series = new RegExp(`^${name}(_bucket|_sum|_count)?\\{[^}]*job="${service}"`, 'm');
        if (series.test(text)) ours.set(name, type);
      }
      return ours;
    };
    let seen = new Map<string, string>();
    await waitUntil(async () => (seen = await families()).size >= sent.length, 20_000, 'the probe metrics at the prometheus exporter');

    const expected = new Map(
      sent.map((m) => [prometheusName(m), m.kind === 'histogram' ? 'histogram' : m.kind === 'counter' ? 'counter' : 'gauge']),
    );
    expect(Object.fromEntries([...seen].sort())).toEqual(Object.fromEntries([...expected].sort()));
    // The attribute of the RED histogram becomes the label the dashboard groups by.
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toMatch(new RegExp(`^http_server_request_duration_seconds_count\\{[^}]*http_route="/probe"[^}]*job="${service}"`, 'm'));
  }, 60_000);
}
