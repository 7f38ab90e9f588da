import { existsSync, readFileSync } from 'node:fs';

/** An exported span as the collector's file exporter writes it (OTLP JSON), with its resource's attributes. */
export interface FileSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: unknown[];
  /** The resource's attributes (service.name, service.instance.id...). */
  resource: Array<{ key: string; value: { stringValue?: string } }>;
}

/**
 * Every span in the collector's file exporter output (OTLP JSON lines). The collector may be writing while this
 * reads: a last line without its end (cut at a buffer's size) is not complete yet, and is read on the next call.
 */
export function spansInCollectorFile(file: string | undefined): FileSpan[] {
  if (!file || !existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  const spans: FileSpan[] = [];
  for (const line of complete.split('\n').filter(Boolean)) {
    for (const rs of JSON.parse(line).resourceSpans ?? []) {
      const resource = rs.resource?.attributes ?? [];
      for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) spans.push({ ...span, resource });
    }
  }
  return spans;
}

/** The value of a resource attribute of a span (e.g. `service.name`), '' when it has none. */
export const resourceValue = (span: FileSpan, key: string): string => span.resource.find((a) => a.key === key)?.value?.stringValue ?? '';
