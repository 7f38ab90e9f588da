/**
 * Every metric the apps export, declared once: instruments are created from these entries only, the dashboard in
 * deploy/ may name only these (in their Prometheus form), and docs/observability.md describes each. Names follow the
 * OpenTelemetry semantic conventions where one exists (HTTP, Node.js runtime, V8); ours carry the `udp.` prefix.
 */
export interface MetricEntry {
  readonly name: string;
  readonly kind: 'histogram' | 'gauge' | 'counter' | 'updowncounter';
  /** UCUM unit as OpenTelemetry writes it (`s`, `By`, `{event}`). */
  readonly unit: string;
  readonly description: string;
}

export const METRICS = {
  httpServerRequestDuration: {
    name: 'http.server.request.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Duration of every HTTP server request, before any trace sampling',
  },
  projectionLagEvents: {
    name: 'udp.projection.lag.events',
    kind: 'gauge',
    unit: '{event}',
    description: 'Events stored but not yet applied by a projection',
  },
  projectionLagSeconds: {
    name: 'udp.projection.lag.seconds',
    kind: 'gauge',
    unit: 's',
    description: 'Age of the oldest stored event a projection has not applied yet (0 when caught up)',
  },
  projectionApplied: {
    name: 'udp.projection.applied',
    kind: 'counter',
    unit: '{event}',
    description: 'Events a projection applied (a change publisher: published); replicas add up to the events stored',
  },
  projectionSegmentsHeld: {
    name: 'udp.projection.segments.held',
    kind: 'gauge',
    unit: '{segment}',
    description: 'Segments of a projection this replica holds (distributed mode); the replicas add up to the segment count',
  },
  kafkaConsumerLag: {
    name: 'udp.kafka.consumer.lag',
    kind: 'gauge',
    unit: '{message}',
    description: 'Messages on a topic partition not yet committed by a consumer group',
  },
  publisherBacklog: {
    name: 'udp.publisher.backlog',
    kind: 'gauge',
    unit: '{event}',
    description: 'Stored events the change publisher has not published yet',
  },
  readYourWritesWait: {
    name: 'udp.read_your_writes.wait.duration',
    kind: 'histogram',
    unit: 's',
    description: 'How long an acknowledged write waited for its own read model to show it',
  },
  sqliteWriterQueue: {
    name: 'udp.sqlite.writer.queue',
    kind: 'gauge',
    unit: '{commit}',
    description: 'Appends waiting for the SQLite writer',
  },
  sqliteCommitDuration: {
    name: 'udp.sqlite.commit.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Time of one SQLite group commit (with fsync), from the batch handed to the writer thread to its answer',
  },
  eventLoopDelayP99: {
    name: 'nodejs.eventloop.delay.p99',
    kind: 'gauge',
    unit: 's',
    description: "99th percentile of the event loop's delay since the last collection",
  },
  eventLoopDelayMax: {
    name: 'nodejs.eventloop.delay.max',
    kind: 'gauge',
    unit: 's',
    description: 'Largest event loop delay since the last collection',
  },
  heapUsed: {
    name: 'v8js.memory.heap.used',
    kind: 'gauge',
    unit: 'By',
    description: 'V8 heap in use',
  },
  heapLimit: {
    name: 'v8js.memory.heap.limit',
    kind: 'gauge',
    unit: 'By',
    description: 'V8 heap size limit',
  },
  changesStreams: {
    name: 'udp.changes.streams',
    kind: 'gauge',
    unit: '{stream}',
    description: 'Live-sync streams (GET /api/changes) open at this gateway process',
  },
  changesEvents: {
    name: 'udp.changes.events',
    kind: 'counter',
    unit: '{event}',
    description: 'Change events sent on live-sync streams',
  },
  changesSlowReaders: {
    name: 'udp.changes.slow_readers',
    kind: 'counter',
    unit: '{stream}',
    description: 'Live-sync streams closed because their reader fell more than CHANGES_MAX_BUFFER_BYTES behind',
  },
  changesLatency: {
    name: 'udp.changes.latency',
    kind: 'histogram',
    unit: 's',
    description: 'From a change stored to its event written on a stream of the same user',
  },
} as const satisfies Record<string, MetricEntry>;
