import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { PrettyOptions } from 'pino-pretty';

export type { Logger } from 'pino';

/**
 * `LOG_FORMAT`: `json`, `pretty` (one coloured line per entry, for a person), or unset: pretty on a terminal,
 * JSON anywhere else (files, pipes, containers, CI, tests).
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, terminal = Boolean(process.stdout.isTTY)): 'json' | 'pretty' {
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return terminal && !env.CI && !env.JEST_WORKER_ID ? 'pretty' : 'json';
}

let prettyStream: DestinationStream | null | undefined;

/**
 * pino's own pretty printer (pino-pretty, a development dependency), one stream shared by every logger of the
 * process (the embedded mode has one per app). It writes synchronously in this thread, so lines keep their order
 * with what the process writes itself (the embedded host's ready block). Null where pino-pretty is not installed
 * (the production image): the logs stay JSON.
 */
function sharedPrettyStream(): DestinationStream | null {
  if (prettyStream !== undefined) return prettyStream;
  let build: (options: PrettyOptions) => DestinationStream;
  try {
    // Optional: absent from production installs.
    build = require('pino-pretty') as typeof build;
  } catch {
    return (prettyStream = null);
  }
  prettyStream = build({
    messageKey: 'message',
    // An access line reads `gateway | request POST /api/history/v2 200 55.8 ms (upstream 45.9 ms)`.
    messageFormat:
      '{service} | {message}{if method} {method} {path} {status} {ms} ms{end}{if upstream_ms} (upstream {upstream_ms} ms){end}',
    ignore: 'service,method,path,status,ms,upstream_ms',
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    sync: true,
  });
  return prettyStream;
}

const TRACE_BOUND = Symbol('udp.trace-bound');

/**
 * A request's logger: every line carries the request id and the request's trace id (and its server span's id when
 * the trace is recorded), from the request's context rather than from the active span. Loggers made from it keep
 * them (pino's children inherit from their parent).
 */
export function requestLogger(
  logger: Logger,
  requestId: string,
  trace?: { traceId: string; span?: { spanContext(): { spanId: string } } },
): Logger {
  if (!trace) return logger.child({ request_id: requestId });
  const child = logger.child({
    request_id: requestId,
    trace_id: trace.traceId,
    ...(trace.span && { span_id: trace.span.spanContext().spanId }),
  });
  (child as { [TRACE_BOUND]?: boolean })[TRACE_BOUND] = true;
  return child;
}

/**
 * Structured JSON logs (pretty on a terminal: `logFormat`). Every line carries the active trace id (joins logs to traces); request handlers add
 * the request id through a child logger. Credentials never reach a log line.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    messageKey: 'message',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-udp-identity"]',
        'req.headers["x-service-debug-secret"]',
        'headers.authorization',
        'token',
        'password',
      ],
      censor: '[redacted]',
    },
    mixin(_object, _level, logger) {
      // A request's logger carries its trace already (a trace not recorded has no active span to read it from).
      if ((logger as { [TRACE_BOUND]?: boolean })[TRACE_BOUND]) return {};
      const context = trace.getActiveSpan()?.spanContext();
      return context ? { trace_id: context.traceId, span_id: context.spanId } : {};
    },
  };
  if (destination) return pino(options, destination);
  const pretty = level !== 'silent' && logFormat() === 'pretty' ? sharedPrettyStream() : null;
  return pretty ? pino(options, pretty) : pino(options, jsonLines());
}

let jsonStream: DestinationStream | undefined;
/**
 * Standard output, written off the event loop: a line is queued and written by libuv's thread pool, with the lines
 * queued while a write is under way together (under load, one write for many access lines instead of one blocking
 * write each). Nothing is held back waiting for more; what is queued is written before the process exits (pino
 * flushes it at exit), and only a kill -9 can lose the last lines.
 */
function jsonLines(): DestinationStream {
  return (jsonStream ??= pino.destination({ dest: 1, sync: false }));
}
