import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { MongoClient } from 'mongodb';
import type { Pool } from 'pg';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { describeOnServers } from './outage';
import { applyOnce, historyOf, range, servers as realServers, serversMissing, type Store, Writers } from './support';

/**
 * Scale-out that divides the work (issue 20): three history-svc processes on the same stores (one event store, one
 * read-model database, one Kafka topic), writers to 50 users through all three. In steady state each stored event is
 * applied to the read model once and published once (the replicas divide 16 segments, each claimed by one of them);
 * after `kill -9` of one instance under writes, the others take its segments over within two lease periods, no
 * acknowledged write is lost, and every change reaches Kafka (repeats only from the takeover, with their event ids).
 *
 * The stores: PostgreSQL for the events and the read models where tools/servers/with-servers.sh started it (CI), in a
 * database of the suite's own; otherwise the event store file and FerretDB. The printed line names which (`store=`).
 *
 * Applications are counted by the apps' own metric (`udp.projection.applied`, through the real collector: CI runs
 * this under tools/servers/with-otelcol.sh), stored events by reading the event store (the file, or `udp_events`).
 */
const STORE: Store = serversMissing('postgres') ? 'file' : 'postgres';
const LEASE_MS = 3000;
/**
 * The offered load. FerretDB: each of the 50 users writes, waits 0.5 s, writes again: up to about 70 writes/s through
 * the three, what they take on this 2-core machine with FerretDB (bench/README.md, "FerretDB's pool deadlock, and the
 * rate past it"). PostgreSQL: no pause, the 50 writers as fast as the three answer (the target is 500/s); more writes
 * in steady state, so that the rate is taken over seconds. 50 writers waiting for their answers offer at most 50 / the
 * time a write takes; on the busy 2-core machine 200 of them got no more (42/s against 41-44/s with 50, each write
 * then waiting 2.8 s, and leases ran out under the load), so there the three are the bound, not the writers.
 */
const PAUSE_MS = STORE === 'postgres' ? 0 : 500;
const STEADY_WRITES = STORE === 'postgres' ? 1500 : 300;
/**
 * Or the steady state ends after this long, once it has at least 300 writes: a machine busy with other work (a load
 * average of 20 on its 2 cores) took fewer than 1500 in two minutes.
 */
const STEADY_MS = 20_000;
/** The issue's target for the three on PostgreSQL, printed beside the rate (not asserted: no timing in tests). */
const RATE_TARGET = 500;
const PROJECTION = 'history-entries';
const PUBLISHER = 'history-changes-publisher';
const metricsUrl = process.env.OTELCOL_METRICS_URL;
const collector = process.env.OTELCOL_OTLP_ENDPOINT;
const run = `three-${process.pid}`;

if (!metricsUrl || !collector) {
  reportSkipped('faults: three instances of history-svc', 'OTELCOL_OTLP_ENDPOINT unset: run under tools/servers/with-otelcol.sh (CI does)');
} else {
  describeOnServers(
    `three instances of history-svc on the same stores (store=${STORE})`,
    'three',
    {
      instances: 3,
      users: 50,
      store: STORE,
      ownDatabase: true,
      env: (i) => ({
        PROJECTION_LEASE_MS: String(LEASE_MS),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector,
        OTEL_METRIC_EXPORT_INTERVAL: '500',
        OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${run}-${i}`,
        LOG_LEVEL: 'warn',
      }),
    },
    (servers) => {
      // The stores the instances share, read directly: MongoDB (FerretDB) and the event store file, or PostgreSQL.
      let mongo: MongoClient | undefined;
      let pg: Pool | undefined;
      beforeAll(async () => {
        if (STORE === 'postgres') {
          const { Pool: PgPool } = require('pg') as typeof import('pg');
          pg = new PgPool({ connectionString: servers.settings.EVENTSTORE_URL, max: 2 });
          // Its idle connections are ended by the server when the suite's database is dropped (after the suite, before
          // this pool may have ended): nothing to report then; a query's own failure still fails the test.
          pg.on('error', () => undefined);
        } else {
          const { MongoClient: Client } = require('mongodb') as typeof import('mongodb');
          mongo = await Client.connect(realServers.mongoUrl!);
        }
      });
      afterAll(async () => {
        await mongo?.close();
        await pg?.end();
      });

      /** The service's read models: a MongoDB database, or a PostgreSQL schema, of this name. */
      const namespace = () => `${servers.settings.MONGO_DB_PREFIX}_history_svc`;
      /** Who holds each segment of a group now (live claims only). */
      const holders = async (group: string) => {
        const now = Date.now();
        const docs = pg
          ? (
              await pg.query<{ doc: { owner: string | null; leaseUntil: number } }>(
                `SELECT doc FROM "${namespace()}".projection_segments WHERE doc->>'group' = $1 AND doc->>'kind' = 'segment'`,
                [group],
              )
            ).rows.map((r) => r.doc)
          : await mongo!.db(namespace()).collection('projection_segments').find({ group, kind: 'segment' }).toArray();
        return docs.map((d) => (d.owner && d.leaseUntil > now ? (d.owner as string) : null));
      };
      /** Events stored per user's history stream, read from the event store the instances share. */
      const storedEvents = async () => {
        const count = (table: string) =>
          `SELECT stream_id, count(*) AS n FROM ${table} WHERE stream_id LIKE 'history-%' GROUP BY stream_id`;
        let rows: Array<{ stream_id: string; n: number | string }>;
        if (pg) {
          rows = (await pg.query<{ stream_id: string; n: string }>(count('udp_events'))).rows;
        } else {
          const db = new Database(join(servers.settings.DATA_DIR, 'history-svc', 'events.sqlite'), { readonly: true });
          rows = db.prepare<[], { stream_id: string; n: number }>(count('events')).all();
          db.close();
        }
        return new Map(rows.map((r) => [r.stream_id.slice('history-'.length), Number(r.n)]));
      };
      /**
       * PostgreSQL: the event rows the three replicas read, all together, by PostgreSQL's own count of index entries read:
       * through the segments' index (`udp_events_segment_16`: segmented subscriptions, each its own segments) and through
       * the whole feed's (`udp_events_feed`: a subscription to every event). Null on the file.
       */
      const indexReads = async () => {
        if (!pg) return null;
        const { rows } = await pg.query<{ segments: string; feed: string }>(
          `SELECT coalesce(sum(idx_tup_read) FILTER (WHERE indexrelname LIKE 'udp_events_segment_%'), 0) AS segments,
                  coalesce(sum(idx_tup_read) FILTER (WHERE indexrelname = 'udp_events_feed'), 0) AS feed
           FROM pg_stat_user_indexes`,
        );
        return { segments: Number(rows[0].segments), feed: Number(rows[0].feed) };
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
        const readsBefore = await indexReads();
        const steady = new Writers(instances, secret, users, 1, PAUSE_MS);
        const steadySince = Date.now();
        await waitUntil(
          () => steady.total >= STEADY_WRITES || (steady.total >= 300 && Date.now() - steadySince >= STEADY_MS),
          120_000,
          `${STEADY_WRITES} acknowledged writes, or 300 and ${STEADY_MS} ms`,
        );
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
        const stored = total(await storedEvents());
        expect(stored).toBe(steady.total);
        await waitUntil(
          async () => (await applied(PROJECTION)) >= stored && (await applied(PUBLISHER)) >= stored,
          30_000,
          'the counts exported',
        );
        // Two more exports: whatever is counted late is counted.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const appliedPerEvent = (await applied(PROJECTION)) / stored;
        const readsAfter = await indexReads();
        const readsInSteadyState =
          readsBefore && readsAfter
            ? { segments: readsAfter.segments - readsBefore.segments, feed: readsAfter.feed - readsBefore.feed }
            : null;
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
        const perUser = await storedEvents();
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
        // PostgreSQL: the rows read per stored event in steady state, the three replicas together. Each replica reading only
        // its segments, the projection and the publisher read each event about once each among the three (2 per event;
        // lag checks and re-reads of events an open transaction held back add some); 6 if each read every event.
        const readPerEvent = readsInSteadyState
          ? `read_per_event=${(readsInSteadyState.segments / stored).toFixed(2)} (whole feed: ${(readsInSteadyState.feed / stored).toFixed(2)}) `
          : '';
        console.log(
          `[faults] three instances: store=${STORE} writes=${steady.total + writers.total} ` +
            `steady_rate=${steady.perSecond.toFixed(0)}/s ${STORE === 'postgres' ? `(target: ≥ ${RATE_TARGET}/s) ` : ''}` +
            `applied_per_event=${appliedPerEvent.toFixed(3)} ${readPerEvent}` +
            `published_per_change=${publishedPerChange.toFixed(3)} takeover_ms=${takeoverMs} lost=${lost} ` +
            `(steady state: ${stored} events, ${late} shown after their acknowledgement; after the kill: ${repeats} repeated ` +
            `Kafka deliveries; lease ${LEASE_MS} ms; target: takeover_ms <= ${2 * LEASE_MS}` +
            `${readsInSteadyState ? "; read_per_event: rows the three replicas read through the segments' index per stored event, about 2 if each reads only its segments, 6 if each read every event" : ''})`,
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
