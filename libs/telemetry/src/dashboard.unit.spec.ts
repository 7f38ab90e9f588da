import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { METRICS } from './metrics-catalogue';
import { prometheusName, prometheusSeries } from './prometheus-names';

/**
 * The Grafana dashboard in deploy/ names only metrics the apps export: every metric name in its PromQL (panel targets
 * and template variables) is the Prometheus form (prometheusSeries) of a METRICS entry, and every entry has a panel.
 */
const deploy = join(__dirname, '..', '..', '..', 'deploy');
const dashboard = JSON.parse(readFileSync(join(deploy, 'grafana', 'dashboards', 'udp.json'), 'utf8')) as unknown;

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/** The metric names one PromQL expression selects (not functions, keywords, labels, strings or Grafana variables). */
function metricNamesInPromql(expr: string): string[] {
  const names = new Set<string>();
  // A name given as a label matcher (`{__name__="x"}`, or a regex: then the regex itself, which no entry matches).
  for (const m of expr.matchAll(/__name__\s*=~?\s*"((?:[^"\\]|\\.)*)"/g)) names.add(m[1]);
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // string literals
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ') // grouping labels
    .replace(/\boffset\s+\S+/gi, ' ')
    .replace(/\$\{?\w+\}?/g, ' ') // Grafana variables
    .replace(/(^|[^\w:])\d[\w.+-]*/g, '$1 '); // numbers (0.95, 1e3)
  for (const m of stripped.matchAll(/[A-Za-z_:][\w:]*(?!\w)(?!\s*\()/g)) {
    if (!KEYWORDS.has(m[0].toLowerCase())) names.add(m[0]);
  }
  return [...names];
}

/** Every PromQL expression of a dashboard: panel targets (`expr`) and query variables (`label_values(metric, label)`). */
function promqlOf(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(promqlOf);
  if (typeof node !== 'object' || node === null) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'expr' && typeof value === 'string') found.push(value);
    else if (key === 'query' && typeof value === 'string') {
      const labelValues = /^\s*label_values\(\s*(.*),\s*\w+\s*\)\s*$/.exec(value);
      found.push(labelValues ? labelValues[1] : value);
    } else found.push(...promqlOf(value));
  }
  return found;
}

const exported = new Set(Object.values(METRICS).flatMap(prometheusSeries));
/** `metric (in: expression)` for each name a dashboard uses that no METRICS entry exports. */
const unknownMetrics = (d: unknown) =>
  promqlOf(d).flatMap((expr) =>
    metricNamesInPromql(expr)
      .filter((n) => !exported.has(n))
      .map((n) => `${n} (in: ${expr})`),
  );

describe('metricNamesInPromql', () => {
  it.each([
    [
      'sum by (job, http_route) (rate(http_server_request_duration_seconds_count{job=~"$service"}[$__rate_interval]))',
      ['http_server_request_duration_seconds_count'],
    ],
    ['histogram_quantile(0.95, sum by (le) (rate(a_bucket{x="y z"}[5m])))', ['a_bucket']],
    ['a_total / ignoring(code) group_left b_total > bool 1e3', ['a_total', 'b_total']],
    ['v8js_memory_heap_used_bytes offset 5m', ['v8js_memory_heap_used_bytes']],
    ['max(up{job="rate(x)"})', ['up']],
    ['{__name__="udp_x", job="y"}', ['udp_x']],
    ['sum({__name__=~"udp_.*"})', ['udp_.*']],
  ])('%s', (expr, names) => {
    expect(metricNamesInPromql(expr).sort()).toEqual(names.sort());
  });
});

describe('deploy/grafana/dashboards/udp.json', () => {
  it('has PromQL to check (panels and the service variable)', () => {
    expect(promqlOf(dashboard).length).toBeGreaterThan(20);
    expect(promqlOf(dashboard)).toContain('http_server_request_duration_seconds_count');
  });

  it('names only metrics the apps export (the Prometheus form of a METRICS entry)', () => {
    expect(unknownMetrics(dashboard)).toEqual([]);
  });

  it('refuses a panel that names a metric nobody exports', () => {
    // The OTLP name without its unit suffix, as one might write it by hand.
    const wrong = JSON.parse(
      JSON.stringify(dashboard).replace('http_server_request_duration_seconds_bucket', 'http_server_request_duration_bucket'),
    );
    expect(unknownMetrics(wrong)).toEqual([expect.stringMatching(/^http_server_request_duration_bucket \(in: histogram_quantile/)]);
    const dotted = { panels: [{ targets: [{ expr: 'rate(udp.projection.lag.events[5m])' }] }] };
    expect(unknownMetrics(dotted)).not.toEqual([]);
  });

  it('shows every METRICS entry in a panel', () => {
    const used = new Set(promqlOf(dashboard).flatMap(metricNamesInPromql));
    const missing = Object.values(METRICS).filter((m) => !prometheusSeries(m).some((s) => used.has(s)));
    expect(missing.map(prometheusName)).toEqual([]);
  });

  it('queries the provisioned Prometheus data source', () => {
    const provisioned = readFileSync(join(deploy, 'grafana', 'provisioning', 'datasources', 'prometheus.yaml'), 'utf8');
    const uid = /^\s*uid:\s*(\S+)\s*$/m.exec(provisioned)?.[1];
    const uids = new Set(
      JSON.stringify(dashboard)
        .match(/"datasource":\{"type":"prometheus","uid":"[^"]*"\}/g)!
        .map((d) => JSON.parse(`{${d}}`).datasource.uid),
    );
    expect([...uids]).toEqual([uid]);
  });
});
