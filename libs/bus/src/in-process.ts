import { backoffDelayMs } from '@udp/retry';
import type { Bus, BusMessage, Consumer, MessageHandler, ReceivedMessage, SubscribeOptions } from './port';

interface Member {
  handler: MessageHandler;
  /** The keys it is given (SubscribeOptions.keys); the others are passed over unparsed. */
  keys?: (key: string) => boolean;
  active: boolean;
}

interface Group {
  committed: number;
  members: Member[];
  draining: Promise<void> | null;
  again: boolean;
}

/**
 * A message as the log keeps it: its value as JSON text, as Kafka carries it. Each delivery parses its own copy, so
 * no consumer shares an object with the publisher or another consumer, and a value reads back as it would from
 * Kafka (JSON's types only). Cheaper than a structured clone on the way in and on every way out.
 */
interface StoredMessage {
  key: string;
  value: string;
  headers?: Record<string, string>;
}

/** A topic's messages from offset `base` on (older ones were dropped, see `retained`). */
interface Log {
  base: number;
  messages: StoredMessage[];
}

/**
 * The embedded bus: one ordered log per topic (like a single-partition Kafka topic), a committed offset per
 * group, one active member per group. A failing handler is retried with back-off and nothing behind it is
 * delivered first, so per-key order and at-least-once hold as on Kafka.
 *
 * Retention, as Kafka has one: a message every group of its topic has consumed is kept only while it is among
 * the newest `retained`, for a group that subscribes later. A message a group has not consumed is always kept.
 * (Without a bound, a topic nobody consumes here, such as the change events, held every message ever published:
 * 1,100,000 of them after a start that replayed the history store. At 100,000 they still held 100-200 MB of the
 * embedded process's memory; every consumer of the embedded mode subscribes at start.)
 */
export class InProcessBus implements Bus {
  /** Its logs live in this process: a restart starts them empty. */
  readonly durable: boolean = false;
  private readonly logs = new Map<string, Log>();
  /** Groups by topic, then by group id. */
  private readonly groups = new Map<string, Map<string, Group>>();
  private closed = false;

  constructor(
    /** The first pause before a failed message is handed again; doubles while it keeps failing (libs/retry). */
    private readonly retryDelayMs = 50,
    private readonly retained = 10_000,
  ) {}

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    const log = this.log(topic);
    for (const m of messages)
      log.messages.push({ key: m.key, value: JSON.stringify(m.value), ...(m.headers && { headers: { ...m.headers } }) });
    for (const group of this.groupsOf(topic).values()) this.drain(topic, group);
    this.trim(topic, log);
  }

  /** Drops what every group consumed beyond the newest `retained`, in steps of `retained` (a splice is O(n)). */
  private trim(topic: string, log: Log): void {
    const end = log.base + log.messages.length;
    let keepFrom = end - this.retained;
    for (const group of this.groupsOf(topic).values()) keepFrom = Math.min(keepFrom, group.committed);
    if (keepFrom - log.base < this.retained) return;
    log.messages.splice(0, keepFrom - log.base);
    log.base = keepFrom;
  }

  async subscribe(
    topics: string | readonly string[],
    groupId: string,
    handler: MessageHandler,
    options: SubscribeOptions = {},
  ): Promise<Consumer> {
    if (typeof topics === 'string') return this.subscribeOne(topics, groupId, handler, options);
    const consumers = await Promise.all(topics.map((topic) => this.subscribeOne(topic, groupId, handler, options)));
    return { stop: async () => void (await Promise.all(consumers.map((c) => c.stop()))) };
  }

  private subscribeOne(topic: string, groupId: string, handler: MessageHandler, options: SubscribeOptions): Consumer {
    let group = this.groupsOf(topic).get(groupId);
    // A new group starts at the oldest message still kept, or (`latest`) at the next one.
    if (!group) {
      const log = this.log(topic);
      const committed = options.from === 'latest' ? log.base + log.messages.length : log.base;
      this.groupsOf(topic).set(groupId, (group = { committed, members: [], draining: null, again: false }));
    }
    const member: Member = { handler, keys: options.keys, active: true };
    group.members.push(member);
    this.drain(topic, group);
    const g = group;
    return {
      stop: async () => {
        member.active = false;
        g.members = g.members.filter((m) => m !== member);
        if (g.draining) await g.draining.catch(() => undefined);
        this.drain(topic, g);
      },
    };
  }

  private groupsOf(topic: string): Map<string, Group> {
    let groups = this.groups.get(topic);
    if (!groups) this.groups.set(topic, (groups = new Map()));
    return groups;
  }

  private log(topic: string): Log {
    let log = this.logs.get(topic);
    if (!log) this.logs.set(topic, (log = { base: 0, messages: [] }));
    return log;
  }

  private drain(topic: string, group: Group): void {
    if (group.draining) {
      group.again = true;
      return;
    }
    group.draining = this.deliver(topic, group).finally(() => {
      group.draining = null;
      if (group.again) {
        group.again = false;
        this.drain(topic, group);
      }
    });
  }

  private async deliver(topic: string, group: Group): Promise<void> {
    const log = this.log(topic);
    let failures = 0; // of the message at the committed offset, in a row
    while (!this.closed && group.committed < log.base + log.messages.length) {
      const member = group.members.find((m) => m.active);
      if (!member) return;
      const offset = group.committed;
      const stored = log.messages[offset - log.base];
      if (member.keys && !member.keys(stored.key)) {
        group.committed = offset + 1;
        failures = 0;
        continue;
      }
      const message: ReceivedMessage = {
        key: stored.key,
        value: JSON.parse(stored.value) as BusMessage['value'],
        ...(stored.headers && { headers: { ...stored.headers } }),
        topic,
        offset: String(offset),
      };
      try {
        await member.handler(message);
        if (member.active) group.committed = offset + 1;
        failures = 0;
      } catch {
        failures++;
        // Capped at 2 s, as the Kafka consumer's retries are (kafka.ts, maxRetryTime).
        const pause = backoffDelayMs(failures, { baseMs: this.retryDelayMs, maxMs: 2000 });
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.groups.values()].flatMap((groups) => [...groups.values()].map((g) => g.draining?.catch(() => undefined))));
  }
}
