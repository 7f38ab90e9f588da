import type { RecordedEvent } from '@udp/eventstore';
import type { Projection } from './projector';

/** What publishing needs of a bus (the bus port's shape), so this package depends on no adapter. */
export interface MessagePublisher {
  publish(topic: string, messages: Array<{ key: string; value: Record<string, unknown>; headers?: Record<string, string> }>): Promise<void>;
}

/** What every change message carries: whose data changed, how (the event type), at which stream revision, when. */
export interface ChangeMessage {
  userId: string;
  type: string;
  revision: number;
  occurredAt: number;
}

export interface IntegrationPublisherOptions<M extends ChangeMessage> {
  name: string;
  topic: string;
  streamPrefix: string;
  userIdOf(streamId: string): string;
  /** What a service's message adds to the common fields: ids only, never personal data. */
  details?(event: RecordedEvent): Omit<M, keyof ChangeMessage>;
}

/**
 * Publishes a change message per event of a service's streams for the data-management consumers, keyed by
 * user id, with the event id as a header. Checkpointed like a read model: at-least-once, in order per user.
 */
export function integrationPublisher<M extends ChangeMessage>(bus: MessagePublisher, options: IntegrationPublisherOptions<M>): Projection {
  return {
    name: options.name,
    streamPrefixes: [options.streamPrefix],
    async apply(event) {
      const userId = options.userIdOf(event.streamId);
      const message = { userId, type: event.type, ...options.details?.(event), revision: event.revision, occurredAt: event.createdAt };
      await bus.publish(options.topic, [{ key: userId, value: message, headers: { 'event-id': event.id } }]);
    },
  };
}
