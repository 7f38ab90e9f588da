import type { RecordedEvent } from '@udp/eventstore';
import type { Projection } from './projector';

/** What publishing needs of a bus (the bus port's shape), so this package depends on no adapter. */
export interface MessagePublisher {
  publish(topic: string, messages: Array<{ key: string; value: Record<string, unknown>; headers?: Record<string, string> }>): Promise<void>;
}

export interface IntegrationPublisherOptions<M extends Record<string, unknown>> {
  name: string;
  topic: string;
  streamPrefix: string;
  userIdOf(streamId: string): string;
  /** The message for one event: ids and types only, never personal data. */
  message(event: RecordedEvent, userId: string): M;
}

/**
 * Publishes an integration message per event of a service's streams for the data-management consumers,
 * keyed by user id. Checkpointed like a read model: at-least-once, in order per user.
 */
export function integrationPublisher<M extends Record<string, unknown>>(bus: MessagePublisher, options: IntegrationPublisherOptions<M>): Projection {
  return {
    name: options.name,
    streamPrefixes: [options.streamPrefix],
    async apply(event) {
      const userId = options.userIdOf(event.streamId);
      await bus.publish(options.topic, [{ key: userId, value: options.message(event, userId), headers: { 'event-id': event.id } }]);
    },
  };
}
