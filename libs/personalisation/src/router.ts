import { Router, type Request, type Response } from 'express';
import { type Span, SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import { AuthenticationError, IDENTITY_HEADER, type Authenticator, type InternalIdentity } from '@udp/auth';
import {
  type EndpointAnswer,
  type EndpointConfig,
  type EndpointDebug,
  type EndpointItem,
  type PersonalisationConfig,
  personalisationApi,
} from '@udp/contracts';
import { HttpError, badRequest, mountRoute, unauthorized } from '@udp/http-kit';
import { DEBUG_SECRET_HEADER, type DebugSpan, addRequestMetricAttributes, debugSpanCapture, orderByEnd } from '@udp/telemetry';
import { type Component, type ServiceUrls, builtInComponent } from './components';
import { bucketOf, componentFor } from './selection';
import { FailureLimiter, lockoutKey, secretMatches } from './secrets';
import type { ServiceCall } from './service-client';

/** The identity the gateway signs for calls that read no one's data (an anonymous caller's `trending`). */
export const GATEWAY_PRINCIPAL = 'udp:gateway';
const TRENDING = 'trending';

export interface PersonalisationOptions {
  config: PersonalisationConfig;
  /** codops -> secret that unlocks the debug block. */
  secrets: Map<string, string>;
  services: ServiceUrls;
  identity: InternalIdentity;
  authenticator: Authenticator;
  limiter?: FailureLimiter;
}

type Outcome = { component: string; items: EndpointItem[]; fallback?: { reason: string } };

class ComponentTimeout extends Error {
  override readonly name = 'ComponentTimeout';
}

const tracer = () => trace.getTracer('udp-personalisation');

/**
 * `GET /api/v1/{codops}/{endpoint}`: picks the endpoint's component (A/B on `u`, or the `component` override),
 * runs it within its time budget, falls back when it fails, and answers with its items. Whose data a personal
 * component reads comes from the token alone; `u` only places the caller in the split.
 */
export function personalisationRouter(options: PersonalisationOptions): Router {
  const { config, secrets, services, identity, authenticator } = options;
  const limiter = options.limiter ?? new FailureLimiter();
  const router = Router();
  // A middleware layer (no span of its own) still runs in the HTTP server span: remember it as the gateway span.
  router.use('/api/v1', (_req, res, next) => {
    res.locals.serverSpan = trace.getActiveSpan();
    next();
  });

  // A malformed codops or endpoint is a 404 like an unknown one (the table says so).
  mountRoute(router, personalisationApi.endpoint, async ({ params, query }, req: Request, res: Response) => {
    const started = performance.now();
    const { codops: codopsName, endpoint: endpointName } = params;
    const codops = Object.hasOwn(config.codops, codopsName) ? config.codops[codopsName] : undefined;
    const endpoint = codops && Object.hasOwn(codops.endpoints, endpointName) ? codops.endpoints[endpointName] : undefined;
    if (!codops || !endpoint) throw new HttpError(404, 'Not Found', 'unknown codops or endpoint');
    // Own names only: `component=constructor` names no component (an `in` test would find Object's and fail later).
    if (query.component && !Object.hasOwn(endpoint.components, query.component)) {
      throw badRequest(`component must be one of ${Object.keys(endpoint.components).join(', ')}`, [
        { field: 'component', message: 'not a component of this endpoint' },
      ]);
    }

    // The secret never goes further than this check: removed before any component or service runs.
    const given = req.header(DEBUG_SECRET_HEADER);
    delete req.headers[DEBUG_SECRET_HEADER];
    let debug = false;
    if (given !== undefined) {
      // Per codops and client (req.ip: the peer, or the client named by a proxy the gateway trusts).
      const key = lockoutKey(codopsName, req.ip);
      const wait = limiter.blocked(key);
      if (wait !== null)
        throw new HttpError(429, 'Too Many Requests', 'too many wrong debug secrets; retry later', undefined, {
          'retry-after': String(wait),
        });
      debug = secretMatches(secrets.get(codopsName), given);
      if (!debug) {
        limiter.fail(key);
        req.log.warn({ codops: codopsName }, 'wrong debug secret');
      }
    }

    let userId: string | undefined;
    if (req.header('authorization')) {
      try {
        userId = (await authenticator.authenticate(req.header('authorization'), req.header('token-type'))).userId;
      } catch (error) {
        throw error instanceof AuthenticationError
          ? unauthorized(error.message)
          : new HttpError(503, 'Service Unavailable', 'cannot verify credentials now');
      }
    }

    const chosen = query.component ?? componentFor(endpoint.components, bucketOf(codopsName, endpointName, query.u));
    const selection: 'ab' | 'override' = query.component ? 'override' : 'ab';
    const size = query.size ?? endpoint.default_size;
    const common = {
      'service.codops': codopsName,
      'service.endpoint': endpointName,
      'service.component.chosen': chosen,
      'service.component.selection': selection,
    };

    // The gateway span: the HTTP server span renamed, or our own when no instrumentation runs.
    const active = res.locals.serverSpan as Span | undefined;
    // A server span that does not record (an opted-out codops) stays the gateway span: nothing below it records.
    const own = active ? undefined : tracer().startSpan(endpointName, { kind: SpanKind.SERVER });
    const gatewaySpan = (own ?? active)!;
    if (!own) {
      gatewaySpan.updateName(endpointName);
      // The HTTP instrumentation renames its server span after the route when it ends (`GET /api/v1/:codops/:endpoint`);
      // the spec names the gateway span after the endpoint, in exported traces as in the debug block.
      Object.defineProperty(gatewaySpan, 'updateName', { value: () => gatewaySpan });
    }
    gatewaySpan.setAttributes({ ...common, 'service.request_id': req.id });
    // Names from the configuration only (looked up above), so the metric's label values are bounded.
    addRequestMetricAttributes(res, { 'service.codops': codopsName, 'service.endpoint': endpointName, 'service.component': chosen });

    const call: ServiceCall = {
      headers: { [IDENTITY_HEADER]: identity.sign({ userId: userId ?? GATEWAY_PRINCIPAL }), 'x-request-id': req.id },
      signal: AbortSignal.timeout(60_000),
      debug: debug && codops.tracing,
      spans: [],
    };
    const timings: Record<string, number> = {};
    const runIn = (span: Span) =>
      otelContext.with(trace.setSpan(otelContext.active(), span), () =>
        runEndpoint(endpointName, endpoint, chosen, userId, size, services, call, common, timings),
      );
    let outcome: Outcome;
    try {
      outcome = await runIn(gatewaySpan);
    } catch (error) {
      gatewaySpan.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      own?.end();
      throw error;
    }
    addRequestMetricAttributes(res, { 'service.component': outcome.component });
    gatewaySpan.setAttributes({
      'service.component': outcome.component,
      'service.fallback.used': outcome.fallback !== undefined,
      ...(outcome.fallback && { 'service.fallback.reason': outcome.fallback.reason }),
    });
    timings.total = round(performance.now() - started);
    const result = { component: outcome.component, fallback_used: outcome.fallback !== undefined, items: outcome.items };

    if (query.stream) {
      own?.end();
      res.status(200).type('application/x-ndjson');
      res.write(
        `${JSON.stringify({ status: 'ok', codops: codopsName, endpoint: endpointName, component: result.component, fallback_used: result.fallback_used })}\n`,
      );
      for (const item of result.items) res.write(`${JSON.stringify(item)}\n`);
      res.end();
      return;
    }
    const answer: EndpointAnswer = { status: 'ok', codops: codopsName, endpoint: endpointName, result };
    if (debug) {
      const debugBlock: EndpointDebug = {
        request_id: req.id,
        component: outcome.component,
        chosen,
        selection,
        fallback: {
          used: outcome.fallback !== undefined,
          ...(outcome.fallback && { reason: outcome.fallback.reason, component: outcome.component }),
        },
        timings_ms: timings,
      };
      const traceId = gatewaySpan.spanContext().traceId;
      answer.debug = debugBlock;
      answer.debug_spans = {
        trace_id: traceId,
        spans: codops.tracing && gatewaySpan.isRecording() ? collectSpans(gatewaySpan, call.spans) : [],
      };
    }
    own?.end();
    res.status(200).json(answer);
  });

  return router;
}

async function runEndpoint(
  endpointName: string,
  endpoint: EndpointConfig,
  chosen: string,
  userId: string | undefined,
  size: number,
  services: ServiceUrls,
  call: ServiceCall,
  common: Record<string, string>,
  timings: Record<string, number>,
): Promise<Outcome> {
  const run = async (component: string, fallback?: { reason: string }): Promise<EndpointItem[]> => {
    const definition = componentNamed(component);
    return tracer().startActiveSpan(`${endpointName}/${component}`, { kind: SpanKind.INTERNAL }, async (span) => {
      span.setAttributes({
        ...common,
        'service.component': component,
        'service.fallback.used': fallback !== undefined,
        ...(fallback && { 'service.fallback.reason': fallback.reason }),
      });
      const started = performance.now();
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      try {
        const budget = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const error = new ComponentTimeout(`${component} exceeded its budget of ${endpoint.budget_ms} ms`);
            controller.abort(error);
            reject(error);
          }, endpoint.budget_ms);
        });
        const items = await Promise.race([
          definition.run({ services, userId, size, call: { ...call, signal: AbortSignal.any([call.signal, controller.signal]) } }),
          budget,
        ]);
        return items;
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        clearTimeout(timer);
        timings[fallback ? `fallback:${component}` : component] = round(performance.now() - started);
        span.end();
      }
    });
  };

  if (componentNamed(chosen).personal && !userId) {
    const fallback = { reason: 'anonymous' };
    return { component: TRENDING, items: await run(TRENDING, fallback), fallback };
  }
  try {
    return { component: chosen, items: await run(chosen) };
  } catch (error) {
    const reason = error instanceof ComponentTimeout ? 'timeout' : 'error';
    let fallbackName = endpoint.fallback;
    if (!fallbackName) throw new HttpError(503, 'Service Unavailable', `${chosen} failed and the endpoint has no fallback`);
    if (componentNamed(fallbackName).personal && !userId) fallbackName = TRENDING;
    const fallback = { reason };
    try {
      return { component: fallbackName, items: await run(fallbackName, fallback), fallback };
    } catch {
      throw new HttpError(503, 'Service Unavailable', `${chosen} failed (${reason}) and so did its fallback ${fallbackName}`);
    }
  }
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

/** A component the configuration named (checked at start-up, so always found). */
function componentNamed(name: string): Component {
  const component = builtInComponent(name);
  if (!component) throw new Error(`no component ${name}`);
  return component;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
