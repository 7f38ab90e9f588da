import type { MetricEntry } from './metrics-catalogue';

/**
 * The name the collector's `prometheus` exporter (deploy/otel-collector.yaml, default translation: suffixes on, no
 * namespace) gives an OTLP metric, as measured against the real collector (prometheus-names.int.spec.ts):
 * dots become underscores; the unit becomes a suffix (`s` -> `_seconds`, `By` -> `_bytes`) unless the name already
 * ends with it; a UCUM annotation such as `{event}` adds nothing; a counter ends in `_total`. An up-down counter
 * is a Prometheus gauge (no `_total`). A histogram is the three series `_bucket`, `_sum`, `_count` of this name.
 */
export function prometheusName(metric: Pick<MetricEntry, 'name' | 'kind' | 'unit'>): string {
  const words = metric.name.split(/[^A-Za-z0-9_]+/).filter(Boolean);
  const unit = UNITS[metric.unit] ?? (/^\{[^}]*\}$/.test(metric.unit) ? '' : undefined);
  if (unit === undefined) {
    // A unit this rule has not been checked for: add it here and run the collector test, rather than guess.
    throw new Error(`prometheusName: unit ${metric.unit} of ${metric.name} is not in the checked table`);
  }
  if (unit && words[words.length - 1] !== unit) words.push(unit);
  if (metric.kind === 'counter' && words[words.length - 1] !== 'total') words.push('total');
  return words.join('_');
}

/** Every series name a metric appears under in Prometheus. */
export function prometheusSeries(metric: Pick<MetricEntry, 'name' | 'kind' | 'unit'>): string[] {
  const name = prometheusName(metric);
  return metric.kind === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
}

/** The units checked against the collector (the catalogue's and `ms`), as it spells them in a suffix. */
const UNITS: Record<string, string> = { s: 'seconds', ms: 'milliseconds', By: 'bytes' };
