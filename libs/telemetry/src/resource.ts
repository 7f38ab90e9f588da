import { randomUUID } from 'node:crypto';
import type { Resource } from '@opentelemetry/resources';

/** One id per process: replicas of one app are told apart (Prometheus' `instance`), and a restart is a new one. */
const instanceId = randomUUID();

/**
 * What process and host the spans and metrics came from (OTEL_RESOURCE_ATTRIBUTES too), as the SDK's defaults would
 * say, with `service.name` and a `service.instance.id` of this process (unless OTEL_RESOURCE_ATTRIBUTES names one). Without the instance id, two replicas would
 * send their cumulative counts as one series, and the collector would show whichever came last.
 */
export function processResource(serviceName: string): Resource {
  const resources = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const detected = resources.detectResources({ detectors: [resources.envDetector, resources.hostDetector, resources.processDetector] });
  // An instance id given in OTEL_RESOURCE_ATTRIBUTES (a pod's name) is kept; the service name is always the app's.
  return resources
    .resourceFromAttributes({ 'service.instance.id': instanceId })
    .merge(detected)
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName }));
}
