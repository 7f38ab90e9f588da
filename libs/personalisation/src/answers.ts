import type { Response } from 'express';
import type { Span } from '@opentelemetry/api';
import type { EndpointAnswer, EndpointDebug } from '@udp/contracts';
import { type DebugSpan, debugSpanCapture, orderByEnd } from '@udp/telemetry';
import type { Outcome } from './run-endpoint';

export interface Answered {
  codops: string;
  endpoint: string;
  outcome: Outcome;
}

/** `stream=true`: NDJSON, a status line first, then one line per item. */
export function streamAnswer(res: Response, { codops, endpoint, outcome }: Answered): void {
  res.status(200).type('application/x-ndjson');
  const status = { status: 'ok', codops, endpoint, component: outcome.component, fallback_used: outcome.fallback !== undefined };
  res.write(`${JSON.stringify(status)}\n`);
  for (const item of outcome.items) res.write(`${JSON.stringify(item)}\n`);
  res.end();
}

/** The JSON answer, without its debug block. */
export function endpointAnswer({ codops, endpoint, outcome }: Answered): EndpointAnswer {
  const result = { component: outcome.component, fallback_used: outcome.fallback !== undefined, items: outcome.items };
  return { status: 'ok', codops, endpoint, result };
}

export interface DebugBlock {
  requestId: string;
  outcome: Outcome;
  chosen: string;
  selection: 'ab' | 'override';
  timings: Record<string, number>;
  gatewaySpan: Span;
  /** The codops has tracing on: its spans are shown. */
  tracing: boolean;
  /** Spans the services handed back for this call. */
  handedBack: DebugSpan[];
}

/** The debug block and the spans of the call (none when the codops opted out of tracing). */
export function debugBlock(block: DebugBlock): Pick<EndpointAnswer, 'debug' | 'debug_spans'> {
  const { outcome, gatewaySpan } = block;
  const debug: EndpointDebug = {
    request_id: block.requestId,
    component: outcome.component,
    chosen: block.chosen,
    selection: block.selection,
    fallback: {
      used: outcome.fallback !== undefined,
      ...(outcome.fallback && { reason: outcome.fallback.reason, component: outcome.component }),
    },
    timings_ms: block.timings,
  };
  const spans = block.tracing && gatewaySpan.isRecording() ? collectSpans(gatewaySpan, block.handedBack) : [];
  return { debug, debug_spans: { trace_id: gatewaySpan.spanContext().traceId, spans } };
}

/**
 * This process's spans of this call (by the gateway span's id: never other calls of the same trace id) plus those
 * the services handed back for it, once each, ordered by end.
 */
function collectSpans(gatewaySpan: Span, handedBack: DebugSpan[]): DebugSpan[] {
  const traceId = gatewaySpan.spanContext().traceId;
  const local = debugSpanCapture.collect(gatewaySpan.spanContext().spanId);
  const localIds = new Set(local.map((s) => s.span_id));
  return orderByEnd([...handedBack.filter((s) => s.trace_id === traceId && !localIds.has(s.span_id)), ...local]);
}
