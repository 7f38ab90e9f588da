import http from 'node:http';
import { DEBUG_SPANS_HEADER, type DebugSpan, decodeDebugSpans } from '@udp/telemetry';

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

/** A service answered with an error status, or not at all. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface ServiceCall {
  /** Headers the gateway adds: the signed identity, the request id. */
  headers: Record<string, string>;
  signal: AbortSignal;
  /** Ask the service for its spans of this call (debug block). */
  debug: boolean;
  /** Spans handed back by services land here. */
  spans: DebugSpan[];
}

/** GET a service's JSON over HTTP (traced by the HTTP instrumentation like any call between processes). */
export function getJson<T>(baseUrl: string, path: string, call: ServiceCall): Promise<T> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        protocol: base.protocol,
        hostname: base.hostname,
        port: base.port,
        path,
        agent,
        signal: call.signal,
        // The handed-back spans can make a large header.
        maxHeaderSize: 1024 * 1024,
        headers: { ...call.headers, accept: 'application/json', ...(call.debug ? { [DEBUG_SPANS_HEADER]: '1' } : {}) },
      },
      (answer) => {
        if (call.debug) call.spans.push(...decodeDebugSpans(answer.headers[DEBUG_SPANS_HEADER] as string | undefined));
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('error', reject);
        answer.on('end', () => {
          const status = answer.statusCode ?? 502;
          if (status >= 300) return reject(new UpstreamError(`${path.split('?')[0]} answered ${status}`, status));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
          } catch {
            reject(new UpstreamError(`${path.split('?')[0]} answered malformed JSON`, status));
          }
        });
      },
    );
    request.on('error', (error) =>
      reject(call.signal.aborted ? call.signal.reason : new UpstreamError(`${path.split('?')[0]}: ${error.message}`)),
    );
  });
}
