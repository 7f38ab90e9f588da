import { type EventAt, type ProjectedAggregate, aggregateProjection } from './aggregate-projection';
import type { DomainEvent } from './decider';
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

export interface IntegrationPublisherOptions<E extends DomainEvent, M extends ChangeMessage, Id = string> {
  name: string;
  topic: string;
  /** The aggregate whose events are published: one stream per user, or several (then `userOf` names the user). */
  aggregate: ProjectedAggregate<E, Id>;
  /** The user whose data a stream holds (by default its id: one stream per user). */
  userOf?(id: Id): string;
  /** What a service's message adds to the common fields: ids only, never personal data. */
  details?(event: E, at: EventAt<Id>): Omit<M, keyof ChangeMessage>;
}

/**
 * Publishes a change message per event of a service's streams for the data-management consumers, keyed by
 * user id, with the event id as a header. Checkpointed like a read model: at-least-once, in order per user. The
 * events in hand go in one produce (a batch, in order: a user's messages keep their order in their partition).
 */
export function integrationPublisher<E extends DomainEvent, M extends ChangeMessage, Id = string>(
  bus: MessagePublisher,
  options: IntegrationPublisherOptions<E, M, Id>,
): Projection {
  const userOf = options.userOf ?? ((id: Id) => id as unknown as string);
  const messageOf = (event: E, at: EventAt<Id>) => {
    const userId = userOf(at.id);
    return {
      key: userId,
      value: { userId, type: event.type, ...options.details?.(event, at), revision: at.revision, occurredAt: at.createdAt },
      headers: { 'event-id': at.eventId },
    };
  };
  return aggregateProjection({
    name: options.name,
    aggregate: options.aggregate,
    async apply(event, at) {
      await bus.publish(options.topic, [messageOf(event, at)]);
    },
    async applyBatch(events) {
      await bus.publish(
        options.topic,
        events.map(({ event, at }) => messageOf(event, at)),
      );
    },
  });
}
