import { METRICS } from './metrics-catalogue';
import { prometheusName, prometheusSeries } from './prometheus-names';

describe('prometheusName (the collector prometheus exporter naming rule)', () => {
  it.each([
    [{ name: 'http.server.request.duration', kind: 'histogram', unit: 's' }, 'http_server_request_duration_seconds'],
    [{ name: 'udp.projection.lag.seconds', kind: 'gauge', unit: 's' }, 'udp_projection_lag_seconds'],
    [{ name: 'udp.projection.lag.events', kind: 'gauge', unit: '{event}' }, 'udp_projection_lag_events'],
    [{ name: 'udp.read_your_writes.wait.duration', kind: 'histogram', unit: 's' }, 'udp_read_your_writes_wait_duration_seconds'],
    [{ name: 'v8js.memory.heap.used', kind: 'gauge', unit: 'By' }, 'v8js_memory_heap_used_bytes'],
    [{ name: 'nodejs.eventloop.delay.p99', kind: 'gauge', unit: 's' }, 'nodejs_eventloop_delay_p99_seconds'],
    [{ name: 'udp.things.sent', kind: 'counter', unit: '{thing}' }, 'udp_things_sent_total'],
    [{ name: 'udp.things.open', kind: 'updowncounter', unit: '{thing}' }, 'udp_things_open'],
  ] as const)('%j -> %s', (metric, expected) => {
    expect(prometheusName(metric)).toBe(expected);
  });

  it('names a histogram by its three series and anything else by its name', () => {
    expect(prometheusSeries(METRICS.httpServerRequestDuration)).toEqual([
      'http_server_request_duration_seconds_bucket',
      'http_server_request_duration_seconds_sum',
      'http_server_request_duration_seconds_count',
    ]);
    expect(prometheusSeries(METRICS.heapUsed)).toEqual(['v8js_memory_heap_used_bytes']);
  });

  it('refuses a unit whose translation has not been checked against the collector', () => {
    expect(() => prometheusName({ name: 'udp.x', kind: 'gauge', unit: 'KiBy' })).toThrow(/KiBy of udp.x is not in the checked table/);
  });

  it('gives every catalogue entry a distinct name', () => {
    const names = Object.values(METRICS).map(prometheusName);
    expect(new Set(names).size).toBe(names.length);
  });
});
