import { Router, type Request, type Response } from 'express';
import { type Span, SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import { GATEWAY_PRINCIPAL, IDENTITY_HEADER, type Authenticator, type InternalIdentity } from '@udp/auth';
import { type EndpointConfig, type PersonalisationConfig, personalisationApi } from '@udp/contracts';
import { authenticateCaller } from '@udp/gateway-core';
import { HttpError, badRequest, mountRoute, nameServerSpan } from '@udp/http-kit';
import { addRequestMetricAttributes, requestSpanOf } from '@udp/telemetry';
import { debugBlock, endpointAnswer, streamAnswer } from './answers';
import type { ServiceUrls } from './components';
import { debugUnlocked } from './debug-access';
import { round, runEndpoint } from './run-endpoint';
import { bucketOf, componentFor } from './selection';
import { FailureLimiter } from './secrets';
import type { ServiceCall } from './service-client';

export interface PersonalisationOptions {
  config: PersonalisationConfig;
  /** codops -> secret that unlocks the debug block. */
  secrets: Map<string, string>;
  services: ServiceUrls;
  identity: InternalIdentity;
  authenticator: Authenticator;
  limiter?: FailureLimiter;
  /** Whether the user's erasure is pending: then their request is refused, as every request of theirs (409). */
  erasureHeld?: (userId: string) => HttpError | undefined;
}

/**
 * `GET /api/v1/{codops}/{endpoint}`: picks the endpoint's component (A/B on `u`, or the `component` override),
 * runs it within its time budget, falls back when it fails, and answers with its items. Whose data a personal
 * component reads comes from the token alone; `u` only places the caller in the split.
 */
export function personalisationRouter(options: PersonalisationOptions): Router {
  const { config, secrets, services, identity, authenticator } = options;
  const limiter = options.limiter ?? new FailureLimiter();
  const router = Router();

  mountRoute(router, personalisationApi.endpoint, async ({ params, query }, req: Request, res: Response) => {
    const started = performance.now();
    const { codops: codopsName, endpoint: endpointName } = params;
    const { codops, endpoint } = endpointOf(config, codopsName, endpointName, query.component);
    const debug = debugUnlocked({ req, codops: codopsName, secrets, limiter });
    // Credentials are optional here: an anonymous caller gets what reads no one's data.
    const userId = req.header('authorization') ? (await authenticateCaller(authenticator, req)).userId : undefined;
    const held = userId === undefined ? undefined : options.erasureHeld?.(userId);
    if (held) throw held;

    const chosen = query.component ?? componentFor(endpoint.components, bucketOf(codopsName, endpointName, query.u));
    const selection: 'ab' | 'override' = query.component ? 'override' : 'ab';
    const attributes = {
      'service.codops': codopsName,
      'service.endpoint': endpointName,
      'service.component.chosen': chosen,
      'service.component.selection': selection,
    };
    const gateway = gatewaySpan(req, res, endpointName);
    gateway.span.setAttributes({ ...attributes, 'service.request_id': req.id });
    // Names from the configuration only (looked up above), so the metric's label values are bounded.
    addRequestMetricAttributes(res, { 'service.codops': codopsName, 'service.endpoint': endpointName, 'service.component': chosen });

    const call: ServiceCall = {
      headers: { [IDENTITY_HEADER]: identity.sign({ userId: userId ?? GATEWAY_PRINCIPAL }), 'x-request-id': req.id },
      signal: AbortSignal.timeout(60_000),
      debug: debug && codops.tracing,
      spans: [],
    };
    const timings: Record<string, number> = {};
    const run = { endpointName, endpoint, chosen, userId, size: query.size ?? endpoint.default_size, services, call, attributes, timings };
    const outcome = await otelContext
      .with(trace.setSpan(otelContext.active(), gateway.span), () => runEndpoint(run))
      .catch((error: Error) => {
        gateway.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        gateway.end();
        throw error;
      });
    addRequestMetricAttributes(res, { 'service.component': outcome.component });
    gateway.span.setAttributes({
      'service.component': outcome.component,
      'service.fallback.used': outcome.fallback !== undefined,
      ...(outcome.fallback && { 'service.fallback.reason': outcome.fallback.reason }),
    });
    timings.total = round(performance.now() - started);

    const answered = { codops: codopsName, endpoint: endpointName, outcome };
    if (query.stream) {
      gateway.end();
      return streamAnswer(res, answered);
    }
    const answer = endpointAnswer(answered);
    if (debug) {
      const block = { requestId: req.id, outcome, chosen, selection, timings, tracing: codops.tracing, handedBack: call.spans };
      Object.assign(answer, debugBlock({ ...block, gatewaySpan: gateway.span }));
    }
    gateway.end();
    res.status(200).json(answer);
  });

  return router;
}

/** The configured codops and endpoint; a malformed or unknown one is a 404 (the table says so). */
function endpointOf(config: PersonalisationConfig, codopsName: string, endpointName: string, component: string | undefined) {
  const codops = Object.hasOwn(config.codops, codopsName) ? config.codops[codopsName] : undefined;
  const endpoint: EndpointConfig | undefined =
    codops && Object.hasOwn(codops.endpoints, endpointName) ? codops.endpoints[endpointName] : undefined;
  if (!codops || !endpoint) throw new HttpError(404, 'Not Found', 'unknown codops or endpoint');
  // Own names only: `component=constructor` names no component (an `in` test would find Object's and fail later).
  if (component && !Object.hasOwn(endpoint.components, component)) {
    throw badRequest(`component must be one of ${Object.keys(endpoint.components).join(', ')}`, [
      { field: 'component', message: 'not a component of this endpoint' },
    ]);
  }
  return { codops, endpoint };
}

/**
 * The gateway span, named after the endpoint: the HTTP server span (the handler runs in it: there is no Express
 * instrumentation), kept under that name when the answer is written; or, when no instrumentation runs, a span of
 * our own, which `end` ends. A server span that does not record (an opted-out codops) stays the gateway span:
 * nothing below it records.
 */
function gatewaySpan(req: Request, res: Response, endpointName: string): { span: Span; end: () => void } {
  // A trace not recorded has no active span: the request's trace id, in a span that records nothing.
  const server = trace.getActiveSpan() ?? requestSpanOf(req);
  if (server) {
    nameServerSpan(res, server, endpointName);
    return { span: server, end: () => undefined };
  }
  const own = trace.getTracer('udp-personalisation').startSpan(endpointName, { kind: SpanKind.SERVER });
  return { span: own, end: () => own.end() };
}
