import { waitUntil } from '@udp/test-kit';
import { describeOnServers } from './outage';
import { applyOnce, historyOf, printLogTail, range, Writers } from './support';

/**
 * Two history-svc processes on the same stores (one event store file, one MongoDB database, one Kafka topic)
 * under concurrent writes to the same users through both: no acknowledged write is lost, the technical ids stay
 * unique, both instances answer the same history, and the topic holds every change.
 */
describeOnServers('two instances of history-svc on the same stores', 'two', { instances: 2 }, (servers) => {
  it('loses no acknowledged write and converges on one history per user', async () => {
    const {
      settings,
      users,
      instances: [a, b],
      topic,
    } = servers;
    // Two writers per user, each alternating between the instances: writes to one history race across processes.
    const writers = new Writers([a, b], settings.INTERNAL_AUTH_SECRET, users, 2);
    await waitUntil(() => writers.total >= 200, 90_000, '200 acknowledged writes');
    await writers.stop();

    // 429 is the spec's answer to a concurrent update of the same history; nothing else but 200.
    expect([...writers.statuses.keys()].filter((s) => s !== 200 && s !== 429)).toEqual([]);
    for (const user of users) {
      const acknowledged = [...writers.acknowledged.get(user)!].sort();
      // A write is acknowledged once the read model shows it, or after READ_YOUR_WRITES_TIMEOUT_MS while the projection
      // is late (logged: "read model late"): the history converges on every acknowledged write, within a bound. (A CI
      // run where the other projects loaded the same servers read one entry missing right after the writers stopped.)
      let fromA: Array<{ item_id: string; id: number }> = [];
      const shown = async () => {
        fromA = await historyOf(a, settings.INTERNAL_AUTH_SECRET, user);
        return JSON.stringify(fromA.map((i) => i.item_id).sort()) === JSON.stringify(acknowledged);
      };
      await waitUntil(shown, 30_000, `${user}'s acknowledged writes in the read model`).catch((error: unknown) => {
        printLogTail(a, 'instance a warned', /"level":"(warn|error)"/);
        printLogTail(b, 'instance b warned', /"level":"(warn|error)"/);
        throw error;
      });
      const fromB = await historyOf(b, settings.INTERNAL_AUTH_SECRET, user);
      expect(fromA.map((i) => i.item_id).sort()).toEqual(acknowledged);
      expect(fromB).toEqual(fromA);
      expect(new Set(fromA.map((i) => i.id)).size).toBe(fromA.length);
    }
    // Each instance publishes what it follows in the store; a consumer applying each event id once sees every
    // change exactly once, in order per user.
    const complete = () =>
      users.every((u) => (applyOnce(topic.messages).revisions.get(u)?.length ?? 0) >= writers.acknowledged.get(u)!.length);
    await waitUntil(complete, 60_000, 'every change on Kafka');
    const { revisions, repeats } = applyOnce(topic.messages);
    for (const user of users) expect(revisions.get(user)).toEqual(range(writers.acknowledged.get(user)!.length));
    console.log(
      `[faults] two instances: ${writers.total} writes acknowledged, ${writers.count(429)} answered 429 (concurrent update), ` +
        `${topic.messages.length} Kafka deliveries, ${repeats} repeated deliveries (same event id), 0 lost`,
    );
  });
});
