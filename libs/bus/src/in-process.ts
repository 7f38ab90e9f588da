import type { Bus, BusMessage, Consumer, MessageHandler, ReceivedMessage } from './port';

interface Member {
  handler: MessageHandler;
  active: boolean;
}

interface Group {
  committed: number;
  members: Member[];
  draining: Promise<void> | null;
  again: boolean;
}

/**
 * The embedded bus: one ordered log per topic (like a single-partition Kafka topic), a committed offset per
 * group, one active member per group. A failing handler is retried with back-off and nothing behind it is
 * delivered first, so per-key order and at-least-once hold as on Kafka.
 */
export class InProcessBus implements Bus {
  private readonly logs = new Map<string, BusMessage[]>();
  private readonly groups = new Map<string, Group>();
  private closed = false;

  constructor(private readonly retryDelayMs = 50) {}

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    const log = this.log(topic);
    for (const m of messages) log.push(structuredClone(m));
    for (const [id, group] of this.groups) if (id.startsWith(`${topic}\u0000`)) this.drain(topic, group);
  }

  async subscribe(topic: string, groupId: string, handler: MessageHandler): Promise<Consumer> {
    const id = `${topic}\u0000${groupId}`;
    let group = this.groups.get(id);
    if (!group) this.groups.set(id, (group = { committed: 0, members: [], draining: null, again: false }));
    const member: Member = { handler, active: true };
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

  private log(topic: string): BusMessage[] {
    let log = this.logs.get(topic);
    if (!log) this.logs.set(topic, (log = []));
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
    while (!this.closed && group.committed < log.length) {
      const member = group.members.find((m) => m.active);
      if (!member) return;
      const offset = group.committed;
      const message: ReceivedMessage = { ...structuredClone(log[offset]), topic, offset: String(offset) };
      try {
        await member.handler(message);
        if (member.active) group.committed = offset + 1;
      } catch {
        await new Promise((r) => setTimeout(r, this.retryDelayMs));
      }
    }
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.groups.values()].map((g) => g.draining?.catch(() => undefined)));
  }
}
