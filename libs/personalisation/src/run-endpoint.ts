import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { EndpointConfig, EndpointItem } from '@udp/contracts';
import { HttpError } from '@udp/http-kit';
import { type Component, type ServiceUrls, builtInComponent } from './components';
import type { ServiceCall } from './service-client';

const TRENDING = 'trending';

export type Outcome = { component: string; items: EndpointItem[]; fallback?: { reason: string } };

export interface EndpointRun {
  endpointName: string;
  endpoint: EndpointConfig;
  /** The component the split or the override chose. */
  chosen: string;
  /** The authenticated caller; absent for an anonymous call (a personal component then falls back to trending). */
  userId: string | undefined;
  size: number;
  services: ServiceUrls;
  call: ServiceCall;
  /** Attributes every component span carries (codops, endpoint, choice). */
  attributes: Record<string, string>;
  /** Milliseconds per component run, filled in here for the debug block. */
  timings: Record<string, number>;
}

class ComponentTimeout extends Error {
  override readonly name = 'ComponentTimeout';
}

/**
 * Runs the chosen component within the endpoint's budget; when it fails or times out, the endpoint's fallback (an
 * anonymous caller gets trending instead of a personal component). Neither answering is a 503.
 */
export async function runEndpoint(run: EndpointRun): Promise<Outcome> {
  const { chosen, userId } = run;
  if (componentNamed(chosen).personal && !userId) {
    const fallback = { reason: 'anonymous' };
    return { component: TRENDING, items: await runComponent(run, TRENDING, fallback), fallback };
  }
  try {
    return { component: chosen, items: await runComponent(run, chosen) };
  } catch (error) {
    const reason = error instanceof ComponentTimeout ? 'timeout' : 'error';
    let fallbackName = run.endpoint.fallback;
    if (!fallbackName) throw new HttpError(503, 'Service Unavailable', `${chosen} failed and the endpoint has no fallback`);
    if (componentNamed(fallbackName).personal && !userId) fallbackName = TRENDING;
    const fallback = { reason };
    try {
      return { component: fallbackName, items: await runComponent(run, fallbackName, fallback), fallback };
    } catch {
      throw new HttpError(503, 'Service Unavailable', `${chosen} failed (${reason}) and so did its fallback ${fallbackName}`);
    }
  }
}

/** One component in its own span, aborted when the endpoint's budget runs out. */
function runComponent(run: EndpointRun, component: string, fallback?: { reason: string }): Promise<EndpointItem[]> {
  const { endpointName, endpoint, call, timings } = run;
  const definition = componentNamed(component);
  return trace
    .getTracer('udp-personalisation')
    .startActiveSpan(`${endpointName}/${component}`, { kind: SpanKind.INTERNAL }, async (span) => {
      span.setAttributes({
        ...run.attributes,
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
        const signal = AbortSignal.any([call.signal, controller.signal]);
        return await Promise.race([
          definition.run({ services: run.services, userId: run.userId, size: run.size, call: { ...call, signal } }),
          budget,
        ]);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        clearTimeout(timer);
        timings[fallback ? `fallback:${component}` : component] = round(performance.now() - started);
        span.end();
      }
    });
}

/** A component the configuration named (checked at start-up, so always found). */
function componentNamed(name: string): Component {
  const component = builtInComponent(name);
  if (!component) throw new Error(`no component ${name}`);
  return component;
}

export const round = (ms: number) => Math.round(ms * 10) / 10;
