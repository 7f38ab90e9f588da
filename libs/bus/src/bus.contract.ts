import { randomUUID } from 'node:crypto';
import { waitUntil } from '@udp/test-kit';
import type { Bus, ReceivedMessage } from './port';

/** The behaviour every bus adapter must have (in-process and Kafka). `patienceMs` covers group joins. */
export function busContract(adapter: string, open: () => Promise<Bus>, patienceMs = 5000) {
  describe(`Bus contract: ${adapter}`, () => {
    let bus: Bus;
    const topic = () => `contract.${randomUUID()}`;
    const wait = (condition: () => boolean, what: string) => waitUntil(condition, patienceMs, what);

    beforeEach(async () => {
      bus = await open();
    });
    afterEach(async () => {
      await bus.close();
    });

    it('delivers published messages with key, value and headers', async () => {
      const t = topic();
      const got: ReceivedMessage[] = [];
      await bus.subscribe(t, 'g1', async (m) => void got.push(m));
      await bus.publish(t, [{ key: 'user-1', value: { n: 1, text: 'é' }, headers: { 'event-id': 'e1' } }]);
      await wait(() => got.length === 1, 'delivery');
      expect(got[0]).toMatchObject({ topic: t, key: 'user-1', value: { n: 1, text: 'é' }, headers: { 'event-id': 'e1' } });
    });

    it('gives every group every message, and a late group the older ones too', async () => {
      const t = topic();
      const a: number[] = [];
      const b: number[] = [];
      await bus.subscribe(t, 'ga', async (m) => void a.push(m.value.n as number));
      await bus.publish(
        t,
        [1, 2, 3].map((n) => ({ key: 'k', value: { n } })),
      );
      await bus.subscribe(t, 'gb', async (m) => void b.push(m.value.n as number));
      await wait(() => a.length === 3 && b.length === 3, 'both groups');
      expect(a).toEqual([1, 2, 3]);
      expect(b).toEqual([1, 2, 3]);
    });

    it("starts a new group of from: 'latest' at the next message, not the older ones", async () => {
      const t = topic();
      const old: number[] = [];
      const latest: number[] = [];
      // A group from the oldest first, so the topic exists and holds 1 and 2 before the latest group joins.
      await bus.subscribe(t, 'g-old', async (m) => void old.push(m.value.n as number));
      await bus.publish(
        t,
        [1, 2].map((n) => ({ key: 'k', value: { n } })),
      );
      await wait(() => old.length === 2, 'the older messages');
      await bus.subscribe(t, 'g-latest', async (m) => void latest.push(m.value.n as number), { from: 'latest' });
      await bus.publish(t, [{ key: 'k', value: { n: 3 } }]);
      await wait(() => old.length === 3 && latest.length === 1, 'the next message');
      expect(latest).toEqual([3]);
    });

    it('keeps the order of messages with the same key', async () => {
      const t = topic();
      const byKey = new Map<string, number[]>();
      await bus.subscribe(t, 'g', async (m) => {
        byKey.set(m.key, [...(byKey.get(m.key) ?? []), m.value.n as number]);
      });
      const messages = Array.from({ length: 60 }, (_, i) => ({ key: `user-${i % 3}`, value: { n: i } }));
      await bus.publish(t, messages.slice(0, 30));
      await bus.publish(t, messages.slice(30));
      await wait(() => [...byKey.values()].flat().length === 60, 'all messages');
      for (const [key, ns] of byKey) expect(ns).toEqual(messages.filter((m) => m.key === key).map((m) => m.value.n));
    });

    it('redelivers a message whose handler failed, before anything behind it with the same key', async () => {
      const t = topic();
      const attempts: number[] = [];
      let failures = 0;
      await bus.subscribe(t, 'g', async (m) => {
        attempts.push(m.value.n as number);
        if (m.value.n === 1 && failures++ < 2) throw new Error('transient');
      });
      await bus.publish(t, [
        { key: 'k', value: { n: 1 } },
        { key: 'k', value: { n: 2 } },
      ]);
      await wait(() => attempts.includes(2), 'redelivery');
      expect(attempts.filter((n) => n === 1).length).toBeGreaterThanOrEqual(3);
      expect(attempts.indexOf(2)).toBeGreaterThan(attempts.lastIndexOf(1));
    });

    it('resumes a group from its committed position when a new member takes over', async () => {
      const t = topic();
      const first: number[] = [];
      const consumer = await bus.subscribe(t, 'g', async (m) => void first.push(m.value.n as number));
      await bus.publish(
        t,
        [1, 2].map((n) => ({ key: 'k', value: { n } })),
      );
      await wait(() => first.length === 2, 'first member');
      await consumer.stop();
      await bus.publish(
        t,
        [3, 4].map((n) => ({ key: 'k', value: { n } })),
      );
      const second: number[] = [];
      await bus.subscribe(t, 'g', async (m) => void second.push(m.value.n as number));
      await wait(() => second.length === 2, 'second member');
      expect(second).toEqual([3, 4]);
    });

    it('gives one consumer of several topics the messages of each, each naming its topic', async () => {
      // Given one consumer of two topics
      const [a, b] = [topic(), topic()];
      const got: Array<[string, number]> = [];
      await bus.subscribe([a, b], 'g', async (m) => void got.push([m.topic, m.value.n as number]));
      // When each topic gets messages
      await bus.publish(a, [{ key: 'k', value: { n: 1 } }]);
      await bus.publish(b, [{ key: 'k', value: { n: 2 } }]);
      await bus.publish(a, [{ key: 'k', value: { n: 3 } }]);
      // Then the consumer has them all, in order within each topic
      await wait(() => got.length === 3, 'both topics');
      expect(got.filter(([t]) => t === a).map(([, n]) => n)).toEqual([1, 3]);
      expect(got.filter(([t]) => t === b).map(([, n]) => n)).toEqual([2]);
    });

    it('passes over the messages whose key the filter refuses, as handled: a new member does not get them either', async () => {
      // Given a consumer that takes the key `ann` only
      const t = topic();
      const first: string[] = [];
      const asked: string[] = [];
      const keys = (key: string) => {
        asked.push(key);
        return key === 'ann';
      };
      const consumer = await bus.subscribe(t, 'g', async (m) => void first.push(`${m.key}:${m.value.n}`), { keys });
      // When messages of `ann` and `bob` are published
      await bus.publish(t, [
        { key: 'bob', value: { n: 1 } },
        { key: 'ann', value: { n: 2 } },
        { key: 'bob', value: { n: 3 } },
        { key: 'ann', value: { n: 4 } },
      ]);
      // Then it has those of `ann` alone (on Kafka, `bob`'s partition is another: each is read on its own)
      await wait(() => first.length === 2 && asked.length === 4, 'every message, those of ann handed over');
      expect(first).toEqual(['ann:2', 'ann:4']);
      // And the group is past `bob`'s: a member without a filter then gets only what comes next
      await consumer.stop();
      const second: string[] = [];
      await bus.subscribe(t, 'g', async (m) => void second.push(`${m.key}:${m.value.n}`));
      await bus.publish(t, [{ key: 'bob', value: { n: 5 } }]);
      await wait(() => second.length >= 1, 'the next message');
      expect(second).toEqual(['bob:5']);
    });

    it('answers ping', async () => {
      expect(await bus.ping()).toBe(true);
    });
  });
}
