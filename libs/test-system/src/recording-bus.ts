import { type BusMessage, InProcessBus } from '@udp/bus';
import type { RecordedEvent } from '@udp/eventstore';
import { type SpecEvent, type SpecStream, recordedEvents } from './api-specification';

/** The in-process bus, remembering every message published (in order, with its topic) for specs to read. */
export class RecordingBus extends InProcessBus {
  readonly published: Array<BusMessage & { topic: string }> = [];

  override async publish(topic: string, messages: BusMessage[]): Promise<void> {
    for (const message of messages) this.published.push({ topic, ...message });
    await super.publish(topic, messages);
  }
}

/**
 * A change publisher's messages for `events` of one stream (recorded at createdAt 100, 101, ...), beside the messages
 * the topic's contract expects: one per event, keyed and headed as every change topic is, with `fields(event, i)` in
 * its value beyond `userId`, `type`, `revision` and `occurredAt`. Each published value must also parse by `schema`.
 */
export async function changeMessages(options: {
  publisher: (bus: RecordingBus) => { apply(event: RecordedEvent): Promise<unknown> };
  stream: SpecStream;
  events: SpecEvent[];
  userId: string;
  topic: string;
  schema: { strict(): { parse(value: unknown): unknown } };
  fields?: (event: RecordedEvent, i: number) => Record<string, unknown>;
  positions?: (i: number) => bigint;
}): Promise<{ published: RecordingBus['published']; expected: RecordingBus['published']; parsed: unknown[] }> {
  const bus = new RecordingBus();
  const recorded = recordedEvents(options.stream, options.events).map((event, i) => ({
    ...event,
    createdAt: 100 + i,
    ...(options.positions && { position: options.positions(i) }),
  }));
  const publisher = options.publisher(bus);
  for (const event of recorded) await publisher.apply(event);
  const expected = recorded.map((event, i) => ({
    topic: options.topic,
    key: options.userId,
    headers: { 'event-id': event.id },
    value: { userId: options.userId, type: event.type, ...options.fields?.(event, i), revision: i, occurredAt: 100 + i },
  }));
  const parsed = bus.published.map(({ value }) => options.schema.strict().parse(value));
  return { published: bus.published, expected, parsed };
}
