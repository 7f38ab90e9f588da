import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChangeEvent, openChangeStream } from '@udp/api-client';
import { DEV_ISSUER, signDevToken } from '@udp/auth';
import { KafkaBus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { reportSkipped, waitUntil } from '@udp/test-kit';
import { start as startGateway } from '../../apps/gateway/src/main';
import { start as startHistory } from '../../apps/history-svc/src/main';
import { start as startPlaylist } from '../../apps/playlist-svc/src/main';
import { start as startPreference } from '../../apps/preference-svc/src/main';
import { start as startProfile } from '../../apps/profile-svc/src/main';

/**
 * Live sync in the distributed mode (issue 29): the services publish their change notifications on a real Kafka, and two
 * gateway replicas each follow them with a consumer of its own. A change written through one replica reaches a stream
 * on the other (latency printed); a replica started anew serves a device's resume by Last-Event-ID without loss; a
 * stream carries its own user's changes only. The event store and read models stay SQLite (no KurrentDB here).
 */
const brokers = process.env.KAFKA_BROKERS;
if (!brokers) {
  reportSkipped('live sync, distributed', 'KAFKA_BROKERS must be set (bash tools/servers/with-servers.sh npm test)');
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'udp-live-sync-kafka-'));
  const jwtSecret = randomBytes(32).toString('base64url');
  const env = {
    KAFKA_BROKERS: brokers,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    AUTH_JWT_SECRET: jwtSecret,
    INTERNAL_AUTH_SECRET: randomBytes(32).toString('base64url'),
    AUTH_JWT_ISSUER: DEV_ISSUER,
  };
  const mongoUrl = process.env.MONGO_URL;
  const ticketsPrefix = `udp_live_sync_${randomBytes(4).toString('hex')}`;
  type Running = { port: number; stop(): Promise<void> };
  let history: Running;
  let playlist: Running;
  let preference: Running;
  let profile: Running;
  const gateways: Running[] = [];
  const url = (g: Running) => `http://127.0.0.1:${g.port}`;
  const auth = async (user: string) => `Bearer ${await signDevToken(jwtSecret, user)}`;

  const postgresUrl = process.env.POSTGRES_URL;
  /** A gateway replica; `shared`: the store the replicas share (tickets, streams, erasure epochs), MongoDB by default. */
  const startReplica = async (shared: Record<string, string> = mongoUrl ? { MONGO_URL: mongoUrl } : {}) => {
    const gateway = await startGateway({
      ...env,
      HISTORY_SVC_URL: `http://127.0.0.1:${history.port}`,
      PLAYLIST_SVC_URL: `http://127.0.0.1:${playlist.port}`,
      PREFERENCE_SVC_URL: `http://127.0.0.1:${preference.port}`,
      PROFILE_SVC_URL: `http://127.0.0.1:${profile.port}`,
      // The replicas share their redeemed tickets and their count of each user's streams there (the services keep
      // SQLite here).
      ...shared,
      MONGO_DB_PREFIX: ticketsPrefix,
      // No test here opens more than two streams of a user but the one about this cap.
      CHANGES_MAX_STREAMS_PER_USER: '2',
    });
    gateways.push(gateway);
    return gateway;
  };

  // Starting a replica takes seconds (its consumer joins a group of its own): the tests that stop none share two.
  let pair: Promise<[Running, Running]> | undefined;
  const twoReplicas = () => (pair ??= (async () => [await startReplica(), await startReplica()] as [Running, Running])());

  /** A device's stream at one replica: its events as they come. */
  const openAt = async (gateway: Running, user: string, lastEventId?: string) => {
    const abort = new AbortController();
    const events: ChangeEvent[] = [];
    const answer = await openChangeStream(url(gateway), { authorization: await auth(user), lastEventId, signal: abort.signal });
    if (answer.problem) throw new Error(`refused: ${JSON.stringify(answer.problem)}`);
    let ended = false;
    const done = (async () => {
      try {
        for await (const e of answer.events) events.push(e);
      } catch {
        // aborted
      }
      ended = true;
    })();
    await waitUntil(() => events.some((e) => e.event === 'ready'), 10_000, 'ready');
    return {
      events,
      ended: () => ended,
      history: () => events.filter((e): e is Extract<ChangeEvent, { event: 'history' }> => e.event === 'history'),
      close: async () => {
        abort.abort();
        await done;
      },
    };
  };

  const write = async (gateway: Running, user: string, itemId: string) => {
    const answer = await fetch(`${url(gateway)}/api/history/v2`, {
      method: 'POST',
      headers: { authorization: await auth(user), 'content-type': 'application/json' },
      body: JSON.stringify({ item_id: itemId, last_playback_position: 1 }),
    });
    expect(answer.status).toBeLessThan(300);
  };

  beforeAll(async () => {
    history = await startHistory(env);
    playlist = await startPlaylist(env);
    // A stream reads every area's head when it opens: each service it pulls from runs.
    [preference, profile] = await Promise.all([startPreference(env), startProfile(env)]);
  }, 60_000);
  afterAll(async () => {
    for (const gateway of gateways) await gateway.stop().catch(() => undefined);
    await history?.stop();
    await playlist?.stop();
    await preference?.stop();
    await profile?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  describe('live sync, distributed (real Kafka, two gateway replicas)', () => {
    it("ends the user's streams at every replica when an erasure is requested on the topic, and no one else's", async () => {
      const [one, two] = await twoReplicas();
      await erasureAtEveryReplica(one, two);
    }, 120_000);

    (postgresUrl ? it : it.skip)(
      'the same with the replicas sharing PostgreSQL (READMODEL_URL) instead of MongoDB',
      async () => {
        const shared = { READMODEL_URL: postgresUrl! };
        const one = await startReplica(shared);
        const two = await startReplica(shared);
        await erasureAtEveryReplica(one, two);
      },
      120_000,
    );

    const erasureAtEveryReplica = async (one: Running, two: Running) => {
      const user = `erased-${randomBytes(4).toString('hex')}`;
      const atOne = await openAt(one, user);
      const atTwo = await openAt(two, user);
      const other = await openAt(two, `${user}-kept`);
      // As the export-worker publishes it behind DELETE /api/data.
      const bus = new KafkaBus(brokers.split(','), 'live-sync-test');
      const erasureId = randomBytes(8).toString('hex');
      const requestedAt = Date.now();
      const before = atOne.events.find((e) => e.event === 'ready')!.id!;
      const history = async (gateway: Running) =>
        fetch(`${url(gateway)}/api/history/v2`, { headers: { authorization: await auth(user) } }).then((r) => r.status);
      try {
        await bus.publish(erasureEvents.ERASURE_TOPICS.requested, [{ key: user, value: { erasureId, userId: user, requestedAt } }]);
        await waitUntil(() => [atOne, atTwo].every((s) => s.events.at(-1)?.event === 'erasure'), 20_000, 'the erasure at both replicas');
        await waitUntil(() => atOne.ended() && atTwo.ended(), 5000, 'both streams to end');
        expect(other.events.some((e) => e.event === 'erasure')).toBe(false);
        expect(other.ended()).toBe(false);
        // Both replicas hold the user (409 erasure-pending) until the completion, heard on Kafka, and no one else.
        expect([await history(one), await history(two)]).toEqual([409, 409]);
        expect(
          await fetch(`${url(two)}/api/history/v2`, { headers: { authorization: await auth(`${user}-kept`) } }).then((r) => r.status),
        ).toBe(200);
        await bus.publish(erasureEvents.ERASURE_TOPICS.completed, [
          { key: user, value: { erasureId, userId: user, services: [], requestedAt, completedAt: Date.now() } },
        ]);
        await waitUntil(async () => (await history(one)) === 200 && (await history(two)) === 200, 20_000, 'the hold to end at both');
      } finally {
        await bus.close();
      }
      // A cursor of before the erasure, at either replica: `erasure` and the end (the epoch is shared by the replicas).
      for (const gateway of [one, two]) {
        const { events } = await openChangeStream(url(gateway), { authorization: await auth(user), lastEventId: before });
        const resumed: ChangeEvent[] = [];
        for await (const event of events) resumed.push(event);
        expect(resumed.map((e) => e.event)).toEqual(['erasure']);
      }
      for (const s of [atOne, atTwo, other]) await s.close();
    };

    it("carries a change written through one replica to the user's stream on the other, and no one else's", async () => {
      const [one, two] = await twoReplicas();
      const user = `kafka-${randomBytes(4).toString('hex')}`;
      const tv = await openAt(two, user);
      const neighbour = await openAt(two, `${user}-other`);
      const ms: number[] = [];
      for (let i = 0; i < 20; i++) {
        const sent = performance.now();
        await write(one, user, `k${i}`);
        await waitUntil(() => tv.history().length === i + 1, 10_000, `change ${i} at the other replica`);
        ms.push(performance.now() - sent);
      }
      ms.sort((a, b) => a - b);
      process.stderr.write(
        `[live-sync-distributed] changes=20 p50_ms=${ms[10].toFixed(0)} max_ms=${ms[19].toFixed(0)} ` +
          `(write at one replica to the event at the other, through Kafka; target: max_ms < 1000)\n`,
      );
      // Every change arrived (each waited for above), none after a stall of seconds; the target is printed.
      expect(ms[19]).toBeLessThan(5000);
      expect(tv.history().map((e) => e.data.item_id)).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`));
      expect(neighbour.history()).toHaveLength(0);
      // A preference written through one replica: user-data.preferences.v1 on Kafka, pulled at the other as GET shows it.
      const sent = performance.now();
      const put = await fetch(`${url(one)}/api/preference/player`, {
        method: 'PUT',
        headers: { authorization: await auth(user), 'content-type': 'application/json' },
        body: JSON.stringify({ volume: 7 }),
      });
      expect(put.status).toBe(201);
      await waitUntil(() => tv.events.some((e) => e.event === 'preference'), 10_000, 'the preference at the other replica');
      process.stderr.write(
        `live sync, distributed (Kafka): a preference written at one replica to the other: ${(performance.now() - sent).toFixed(0)} ms\n`,
      );
      expect(tv.events.filter((e) => e.event === 'preference').map((e) => e.data)).toEqual([
        { key: 'player', document: { volume: 7 }, deleted: false },
      ]);
      expect(neighbour.events.some((e) => e.event === 'preference')).toBe(false);
      await tv.close();
      await neighbour.close();
    }, 120_000);

    (mongoUrl ? it : it.skip)(
      'takes a ticket once, whichever replica redeems it (the replicas share them in MongoDB)',
      async () => {
        const [one, two] = await twoReplicas();
        const user = `ticket-${randomBytes(4).toString('hex')}`;
        const issued = await fetch(`${url(one)}/api/changes/ticket`, { method: 'POST', headers: { authorization: await auth(user) } });
        const { ticket } = (await issued.json()) as { ticket: string };
        const abort = new AbortController();
        const first = await fetch(`${url(two)}/api/changes?ticket=${ticket}`, { signal: abort.signal });
        expect(first.status).toBe(200);
        // Replayed at the other replica, and at the same one: each is refused.
        for (const gateway of [one, two]) {
          const replayed = await fetch(`${url(gateway)}/api/changes?ticket=${ticket}`);
          expect(replayed.status).toBe(401);
          expect(((await replayed.json()) as { detail: string }).detail).toMatch(/already used/);
        }
        abort.abort();
      },
      60_000,
    );

    (mongoUrl ? it : it.skip)(
      "ends a user's oldest stream beyond CHANGES_MAX_STREAMS_PER_USER at whichever replica holds it",
      async () => {
        const [one, two] = await twoReplicas();
        const user = `cap-${randomBytes(4).toString('hex')}`;
        const first = await openAt(one, user);
        const second = await openAt(two, user);
        // Two at `one`: within the cap there; three of the user's in all.
        const third = await openAt(one, user);
        await waitUntil(() => first.ended(), 10_000, 'the oldest stream to end');
        expect(first.events.at(-1)).toMatchObject({ event: 'close', data: { reason: 'replaced' } });
        expect([second.ended(), third.ended()]).toEqual([false, false]);
        // The oldest is now at the other replica.
        const fourth = await openAt(one, user);
        await waitUntil(() => second.ended(), 10_000, 'the oldest stream at the other replica to end');
        expect(second.events.at(-1)).toMatchObject({ event: 'close', data: { reason: 'replaced' } });
        expect([third.ended(), fourth.ended()]).toEqual([false, false]);
        for (const s of [first, second, third, fourth]) await s.close();
      },
      60_000,
    );

    it('a replica started anew serves a resume by Last-Event-ID: the changes made while it was away, exactly once', async () => {
      const [writer, reader] = [await startReplica(), await startReplica()];
      const user = `resume-${randomBytes(4).toString('hex')}`;
      const phone = await openAt(reader, user);
      await write(writer, user, 'seen');
      await waitUntil(() => phone.history().length === 1, 10_000, 'the first change');
      const cursor = phone.history()[0].id;
      await phone.close();
      await reader.stop();
      for (let i = 0; i < 5; i++) await write(writer, user, `away${i}`);
      const restarted = await startReplica();
      const back = await openAt(restarted, user, cursor);
      expect(back.history().map((e) => e.data.item_id)).toEqual(['away0', 'away1', 'away2', 'away3', 'away4']);
      // And it follows the topic from then on.
      await write(writer, user, 'after');
      await waitUntil(() => back.history().length === 6, 10_000, 'the change after the restart');
      await back.close();
    }, 120_000);
  });
}
