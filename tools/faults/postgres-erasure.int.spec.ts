import { randomUUID } from 'node:crypto';
import { KafkaBus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { filesHolding, postgresDataDirs, replicaCaughtUpAndCheckpointed, waitUntil } from '@udp/test-kit';
import { describeOnServers, type OnServers } from './outage';
import { historyCaller, othersAtWork, printLogTail, servers as realServers } from './support';

/**
 * Issue 43's erasure on PostgreSQL: history-svc as its own process, its event store on the event store's PostgreSQL of
 * tools/servers/with-servers.sh (a primary and its synchronous streaming replica), the erasure asked on Kafka
 * (`userdata.erasure.requested`, what `DELETE /api/data`'s coordinator publishes) and confirmed by the service.
 *
 * - **The byte scan**: events and read models on PostgreSQL; a user's entries carry a marker (device id and item ids,
 *   all older than the trending window, whose counts name items but no user); after the confirmation, and the
 *   replica's restartpoint, no file of either data dir holds the marker, the user's stream key or their read models'
 *   owner key, while another user's keys are still found in both (so the scan can fail).
 * - **The measure**: `PG_ERASURE_ENTRIES` (50,000 by default) entries erased while 20 other users write then read,
 *   events and read models on PostgreSQL, as a deployment on PostgreSQL runs. Prints `[postgres-erasure] …`; the targets
 *   are printed, not asserted.
 */
const ENTRIES = Number(process.env.PG_ERASURE_ENTRIES ?? 50_000);
const BATCH = 5000;
const HOUR = 3600 * 1000;
const { Client } = require('pg') as typeof import('pg');

/**
 * `count` entries of `user` by batches, newest last, a history written over two years: the last 10 in the last hour,
 * the others older than the trending window (`recent`: how many are in the last hour; taking entries out of the trending counts is erasure-distributed's
 * measure); resolves once the read model shows the newest.
 */
async function seed(call: ReturnType<typeof historyCaller>, user: string, count: number, marker: string, recent = 10): Promise<void> {
  const now = Date.now();
  const dateOf = (i: number) => (i >= count - recent ? now - HOUR + i : now - 730 * 24 * HOUR + i * Math.floor((700 * 24 * HOUR) / count));
  for (let from = 0; from < count; from += BATCH) {
    const data = Array.from({ length: Math.min(BATCH, count - from) }, (_, i) => ({
      item_id: `urn:${marker}:${from + i}`,
      device_id: `${marker}-device`,
      date: dateOf(from + i),
      last_playback_position: from + i,
    }));
    expect((await call(user, 'POST', '/api/history/v2/batch', { data })).status).toBe(204);
  }
  const newest = async () =>
    ((await (await call(user, 'GET', '/api/history/v2?limit=1')).json()) as { data: Array<{ item_id: string }> }).data[0]?.item_id;
  await waitUntil(async () => (await newest()) === `urn:${marker}:${count - 1}`, 600_000, `${count} entries in the read model`);
}

/** The erasure asked on Kafka; resolves with the time to the service's confirmation and the confirmations. */
async function erase(servers: OnServers, user: string): Promise<{ confirmedMs: number; erasureId: string }> {
  const bus = new KafkaBus(realServers.brokers!.split(','), `faults-pg-erasure-${randomUUID().slice(0, 8)}`);
  const erasureId = randomUUID();
  let confirmedMs = 0;
  const requested = performance.now();
  try {
    await bus.subscribe(erasureEvents.ERASURE_TOPICS.confirmed, `faults-pg-erasure-${erasureId}`, async (m) => {
      const message = erasureEvents.ErasureConfirmedMessage.parse(m.value);
      if (message.erasureId === erasureId) confirmedMs ||= Math.round(performance.now() - requested);
    });
    const request: erasureEvents.ErasureRequestedMessage = { erasureId, userId: user, requestedAt: Date.now() };
    await bus.publish(erasureEvents.ERASURE_TOPICS.requested, [{ key: user, value: request }]);
    await waitUntil(() => confirmedMs > 0, 300_000, 'the erasure confirmed by history-svc').catch((error: unknown) => {
      printLogTail(servers.service, 'history-svc said', /erasure|erased|"level":"(warn|error)"/);
      throw error;
    });
  } finally {
    await bus.close();
  }
  return { confirmedMs, erasureId };
}

/** The key of `user`'s history stream, read from the store's table (the scan looks for its bytes). */
async function historyKey(sql: import('pg').Client, user: string): Promise<Buffer> {
  const { rows } = await sql.query('SELECT key FROM udp_stream_keys WHERE stream_id = $1', [`history-${user}`]);
  expect(rows).toHaveLength(1);
  return rows[0].key as Buffer;
}

/** The key of `user`'s read-model documents (sealed collections), from the `_owner_keys` table of whichever schema. */
async function ownerKey(sql: import('pg').Client, user: string): Promise<Buffer> {
  const { rows: schemas } = await sql.query<{ schema: string }>(
    "SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = '_owner_keys'",
  );
  const keys: Buffer[] = [];
  for (const { schema } of schemas)
    keys.push(
      ...(await sql.query(`SELECT key FROM "${schema}"."_owner_keys" WHERE owner = $1`, [user])).rows.map((row) => row.key as Buffer),
    );
  expect(keys).toHaveLength(1);
  return keys[0];
}

/** The replica, when it is still a standby (a failover suite run before under the same servers promotes it). */
async function standby(): Promise<import('pg').Client | null> {
  const replica = new Client({ connectionString: realServers.postgresReplicaUrl });
  await replica.connect();
  const [{ recovering }] = (await replica.query('SELECT pg_is_in_recovery() AS recovering')).rows;
  if (recovering) return replica;
  await replica.end();
  return null;
}

// Each in a describe of its own: describeOnServers's processes then run for its tests only (two deployments on one event
// store at once would each project the other's users, and share the erasure's consumer group).
describe('the byte scan', () =>
  describeOnServers('erasure on PostgreSQL: the byte scan', 'pg-erasure-scan', { instances: 1, users: 0, store: 'postgres' }, (servers) => {
    it('leaves no byte of the user, nor their key, in the primary or the replica, and keeps the others', async () => {
      const dirs = postgresDataDirs();
      expect(dirs).toHaveLength(2);
      const call = historyCaller(servers.service.url, servers.settings.INTERNAL_AUTH_SECRET);
      const [erasee, keeper] = [`pgerase-${randomUUID()}`, `pgkeep-${randomUUID()}`];
      const [gone, kept] = [`GONE${randomUUID().replace(/-/g, '')}`, `KEPT${randomUUID().replace(/-/g, '')}`];
      await seed(call, erasee, 200, gone, 0);
      await seed(call, keeper, 20, kept, 0);
      const sql = new Client({ connectionString: realServers.postgresUrl });
      await sql.connect();
      const replica = await standby();
      try {
        const [goneKey, keptKey] = [await historyKey(sql, erasee), await historyKey(sql, keeper)];
        const [goneOwnerKey, keptOwnerKey] = [await ownerKey(sql, erasee), await ownerKey(sql, keeper)];
        await erase(servers, erasee);
        // The primary's checkpoint was the erasure's own; the replica removes its segments at its restartpoint.
        if (replica) await replicaCaughtUpAndCheckpointed(sql, replica);
        else
          process.stdout.write('[postgres-erasure] the replica was promoted by an earlier suite: its data dir is not a standby any more\n');
        const scanned = replica ? dirs : dirs.slice(0, 1);
        const hits = filesHolding(scanned, [Buffer.from(gone), goneKey, goneOwnerKey, keptKey, keptOwnerKey]);
        expect({ marker: hits.get('0') ?? [], key: hits.get('1') ?? [], ownerKey: hits.get('2') ?? [] }).toEqual({
          marker: [],
          key: [],
          ownerKey: [],
        });
        for (const dir of scanned) for (const kept of ['3', '4']) expect(hits.get(kept)?.some((file) => file.startsWith(dir))).toBe(true);
        // Through the API: the erased user has nothing, the other user everything.
        const page = async (user: string) =>
          ((await (await call(user, 'GET', '/api/history/v2?limit=100')).json()) as { data: Array<{ item_id: string }> }).data;
        expect(await page(erasee)).toEqual([]);
        expect((await page(keeper)).map((e) => e.item_id)).toHaveLength(20);
      } finally {
        await replica?.end();
        await sql.end();
      }
    }, 600_000);
  }));

describe('the measure', () =>
  describeOnServers('erasure on PostgreSQL: the measure', 'pg-erasure-load', { instances: 1, users: 0, store: 'postgres' }, (servers) => {
    it(`confirms the erasure of ${ENTRIES} entries while other users write and read, and leaves none of the user's key`, async () => {
      const call = historyCaller(servers.service.url, servers.settings.INTERNAL_AUTH_SECRET);
      const erasee = `pgerase-${randomUUID()}`;
      const marker = `LOAD${randomUUID().replace(/-/g, '')}`;
      const seeding = performance.now();
      await seed(call, erasee, ENTRIES, marker);
      const seededMs = Math.round(performance.now() - seeding);
      const sql = new Client({ connectionString: realServers.postgresUrl });
      await sql.connect();
      const key = await historyKey(sql, erasee).finally(() => sql.end());

      // Other users: each loop writes one entry of a user, then reads that user's page, 20 ms apart.
      const others = Array.from({ length: 20 }, () => `pgother-${randomUUID()}`);
      // Each loop's time, and when it began: those begun before the erasure are the baseline.
      const latencies: number[] = [];
      const baseline: number[] = [];
      let erasing = false;
      const load = othersAtWork(call, others, (ms) => (erasing ? latencies : baseline).push(ms));
      await new Promise((resolve) => setTimeout(resolve, 3000));
      erasing = true;
      let confirmedMs: number;
      let erasureId: string;
      try {
        ({ confirmedMs, erasureId } = await erase(servers, erasee));
      } finally {
        await load.stop();
      }
      const erased = servers.service.process
        .output('stdout')
        .split('\n')
        .filter((line) => line.includes('user data erased') && line.includes(erasureId));
      const runs = erased.length;
      // How long each step of the participant took (counts and times only).
      const steps = runs === 1 ? JSON.stringify((JSON.parse(erased[0]) as { ms?: unknown }).ms) : '?';
      const sorted = [...latencies].sort((a, b) => a - b);
      const p99Of = (all: number[]) => Math.round(all[Math.min(all.length - 1, Math.floor(0.99 * all.length))] ?? 0);
      const p99 = p99Of(sorted);
      const before = p99Of([...baseline].sort((a, b) => a - b));
      const max = Math.round(sorted.at(-1) ?? 0);
      // The primary only: its checkpoint is the erasure's own (the replica's restartpoint is the scan test's).
      const [primary] = postgresDataDirs();
      const hits = filesHolding([primary], [key, Buffer.from(marker)]);
      // The newest 10 entries are in the trending window: their items are in the counts, which name no user.
      const markerFiles = hits.get('1')?.length ?? 0;
      process.stdout.write(
        `[postgres-erasure] entries=${ENTRIES} confirmed_ms=${confirmedMs} steps_ms=${steps} runs=${runs} others_p99_ms=${p99} others_max_ms=${max} others_p99_before_ms=${before} ` +
          `key_files_left=${hits.get('0')?.length ?? 0} marker_files_left=${markerFiles} (seeded in ${seededMs} ms; others: ` +
          `${sorted.length} write+read; marker_files_left counts files with the user's item ids in plain: the trending counts of ` +
          `their newest 10, which name no user; ` +
          `targets: confirmed_ms < 10000, others_p99_ms < 100, nothing left)\n`,
      );
      expect(runs).toBe(1);
      expect(load.failures).toEqual([]);
      expect(hits.get('0') ?? []).toEqual([]);
      expect(((await (await call(erasee, 'GET', '/api/history/v2?limit=1')).json()) as { data: unknown[] }).data).toEqual([]);
    }, 1_200_000);
  }));
