import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { InternalIdentity } from '@udp/auth';
import type { Bus, Consumer } from '@udp/bus';
import {
  HistoryChangesPage,
  PlaylistChangesPage,
  PreferenceChangesPage,
  ProfileChangesPage,
  erasureEvents,
  historyEvents,
  playlistEvents,
  preferenceEvents,
  profileEvents,
  type z,
} from '@udp/contracts';
import { HttpError, erasurePending } from '@udp/http-kit';
import { type Logger, METRICS, observeGauge, recordCounter, recordHistogram } from '@udp/telemetry';
import type { ErasureHolds } from '../erasure-holds';
import type { ChangePositions, CursorCodec } from './cursor';
import { type ServiceAnswer, type ServiceGet, httpServiceGet } from './service-get';
import type { StreamRegistry } from './stream-registry';
import { ChangeStream } from './stream';

export interface ChangeLimits {
  /** Seconds between heartbeat comments (CHANGES_HEARTBEAT_S). */
  heartbeatS: number;
  /** Streams one user may hold in this process; the oldest is closed (`replaced`) for a new one (CHANGES_MAX_STREAMS_PER_USER). */
  maxStreamsPerUser: number;
  /** Streams this process holds in all; beyond, a new one is a 503 (CHANGES_MAX_STREAMS). */
  maxStreams: number;
  /** Unread bytes a stream may hold before it is closed as a slow reader (CHANGES_MAX_BUFFER_BYTES). */
  maxBufferBytes: number;
  /** Changes a resume may send before `ready`; beyond, `close` (`resync`): read the API afresh (CHANGES_MAX_CATCHUP, 1,000). */
  maxCatchUp?: number;
}

export interface ChangeHubOptions {
  /** Where the change notifications come from: the in-process bus (embedded) or Kafka, with a consumer of our own. */
  bus: Bus;
  /** The services' base addresses: the changes themselves are pulled from them, as the user. */
  historyUrl: string;
  playlistUrl: string;
  preferenceUrl: string;
  profileUrl: string;
  identity: InternalIdentity;
  /** How the services are asked (default: over HTTP, as the user; the embedded host asks its services in process). */
  serviceGet?: ServiceGet;
  cursors: CursorCodec;
  limits: ChangeLimits;
  logger: Logger;
  now?: () => number;
  /** How long a notified change may take to show in the service's read model before the stream stops waiting for it. */
  readModelWaitMs?: number;
  /** The replicas' shared count of each user's streams (distributed mode); without it the cap is per process. */
  registry?: StreamRegistry;
  /** Users whose erasure is pending, and each user's erasure epoch (erasure-holds.ts); without it, none. */
  holds?: Pick<ErasureHolds, 'holding' | 'epochOf'>;
  /**
   * Counts one request of the user against their rate limit; false when they are over it. Each page a resume pulls is
   * charged, so one user's resumes cost them, not the other users.
   */
  charge?: (userId: string) => boolean;
}

const SERVICE = { 'udp.service': 'gateway' };

export type Area = 'history' | 'playlist' | 'preference' | 'profile';
const AREAS: Area[] = ['history', 'playlist', 'preference', 'profile'];

/** A topic the hub follows: its messages' schema, and what a message of a user with an open stream here does. */
interface Followed<S extends z.ZodType> {
  topic: string;
  schema: S;
  act(hub: ChangeHub, message: z.infer<S>): void;
}
const follow = <S extends z.ZodType>(topic: string, schema: S, act: (hub: ChangeHub, message: z.infer<S>) => void): Followed<S> => ({
  topic,
  schema,
  act,
});

/**
 * What each topic means to the streams. A change notification names the event's position in its area's order (the
 * preferences': the store position; the others': the user's stream revision): the streams pull until they have it.
 */
const FOLLOWED = [
  follow(historyEvents.HISTORY_CHANGES_TOPIC, historyEvents.HistoryChangedMessage, (hub, m) =>
    hub.announce('history', m.userId, BigInt(m.revision) + 1n, m.occurredAt),
  ),
  follow(playlistEvents.PLAYLISTS_CHANGES_TOPIC, playlistEvents.PlaylistsChangedMessage, (hub, m) =>
    hub.announce('playlist', m.userId, BigInt(m.revision) + 1n, m.occurredAt),
  ),
  follow(preferenceEvents.PREFERENCES_CHANGES_TOPIC, preferenceEvents.PreferencesChangedMessage, (hub, m) =>
    hub.announce('preference', m.userId, BigInt(m.position) + 1n, m.occurredAt),
  ),
  follow(profileEvents.PROFILE_CHANGES_TOPIC, profileEvents.ProfileChangedMessage, (hub, m) =>
    hub.announce('profile', m.userId, BigInt(m.revision) + 1n, m.occurredAt),
  ),
  follow(erasureEvents.ERASURE_TOPICS.requested, erasureEvents.ErasureRequestedMessage, (hub, m) => hub.erase(m.userId, m.requestedAt)),
];

/** Changes a resume may send before `ready` when the limits do not say (CHANGES_MAX_CATCHUP's default). */
const DEFAULT_MAX_CATCHUP = 1000;

/** How often a share of the streams gets its heartbeat (`beat`). */
const HEARTBEAT_TICK_MS = 10;

/** What a stream's first pull can meet: the service unreachable is a 503 before the stream starts. */
const unavailable = (detail: string) => new HttpError(503, 'Service Unavailable', detail, undefined, { 'retry-after': '5' });

/**
 * The live-sync streams of one gateway process (docs/live-sync.md). The bus says whose data changed (the change
 * topics carry ids only); each of that user's streams then pulls what changed after its own cursor from the service,
 * so what a stream sends is what `GET /api/history/v2?since=` would show, each change exactly once, and a reconnect
 * with `Last-Event-ID` is the same pull from an older cursor. The consumer is this process's own (a group of one,
 * from the newest message): every replica sees every user's notifications; what a replica missed while it was away,
 * its devices' cursors cover.
 */
export class ChangeHub {
  private readonly streams = new Map<string, Set<ChangeStream>>();
  /** The streams counted in the registry (started ones, when there is one). */
  private readonly shared = new Set<ChangeStream>();
  private count = 0;
  private consumer: Consumer | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The streams by the tick of the heartbeat period that writes theirs (`beat`). */
  private readonly beats: Set<ChangeStream>[];
  private tick = 0;
  private nextBeat = 0;
  private stopped = false;
  private unobserve: (() => void) | undefined;
  private readonly now: () => number;
  private readonly serviceGet: ServiceGet;
  /** Changes a resume may send before `ready`. */
  private readonly maxCatchUp: number;
  /** Counters for the metrics and the tests. */
  readonly stats = { eventsSent: 0, slowReadersClosed: 0, replaced: 0 };

  constructor(private readonly options: ChangeHubOptions) {
    this.now = options.now ?? Date.now;
    this.serviceGet = options.serviceGet ?? httpServiceGet(options.identity);
    this.maxCatchUp = options.limits.maxCatchUp ?? DEFAULT_MAX_CATCHUP;
    const ticks = Math.max(1, Math.round((options.limits.heartbeatS * 1000) / HEARTBEAT_TICK_MS));
    this.beats = Array.from({ length: ticks }, () => new Set());
  }

  get open(): number {
    return this.count;
  }

  async start(): Promise<void> {
    const followed = new Map((FOLLOWED as Array<Followed<z.ZodType>>).map((f) => [f.topic, f]));
    // One consumer (one group, one set of fetches) for every topic followed. Every write's notification reaches every
    // gateway: one of a user with no open stream here is passed over on its key (the user id), its value not parsed.
    this.consumer = await this.options.bus.subscribe(
      [...followed.keys()],
      `gateway-changes-${randomBytes(6).toString('hex')}`,
      async ({ topic, value }) => {
        const { schema, act } = followed.get(topic)!;
        if (!this.watched(value)) return;
        const message = schema.safeParse(value);
        if (message.success) act(this, message.data);
      },
      { from: 'latest', keys: (userId) => this.streams.has(userId) },
    );
    await this.options.registry?.start((userId, streamId) => this.replace(userId, streamId, 'across the gateway replicas'));
    this.heartbeat = setInterval(() => this.beat(), (this.options.limits.heartbeatS * 1000) / this.beats.length);
    this.heartbeat.unref();
    this.unobserve = observeGauge(METRICS.changesStreams, (observe) => observe(this.count, SERVICE));
  }

  /**
   * The heartbeat comments of one tick: each stream has its tick in the period (given in turn as streams open), so a
   * period's writes are spread over it, some 30 every 50 ms for 10,000 streams (about 10 us each). Written all at once
   * (even 500 at a time with the event loop let in between), they held the requests that came meanwhile: other
   * requests' p99 rose by 60-250% in a period with a heartbeat (bench/live-sync-idle.mjs).
   */
  private beat(): void {
    for (const stream of this.beats[this.tick]) stream.heartbeat();
    this.tick = (this.tick + 1) % this.beats.length;
  }

  /**
   * Opens a stream for the user from `positions` (a resume) or from now, and sends what a resume owes, then `ready`.
   * Refusals come before the stream starts: 503 at the process's cap or when the service cannot be read.
   */
  async openStream(userId: string, res: Response, positions: ChangePositions | undefined): Promise<void> {
    this.refuseToOpen(userId);
    const { limits, holds } = this.options;
    const stream = new ChangeStream(userId, res, limits.maxBufferBytes, this.now(), (s, reason) => this.closed(s, reason));
    stream.positions = positions;
    // Counted down by a resume's changes until `ready`.
    if (positions) stream.catchUp = this.maxCatchUp;
    let own = this.streams.get(userId);
    if (!own) this.streams.set(userId, (own = new Set()));
    // Registered before the first pull: a change made meanwhile is announced to it and pulled after.
    own.add(stream);
    this.count++;
    stream.beat = this.nextBeat;
    this.beats[stream.beat].add(stream);
    this.nextBeat = (this.nextBeat + 1) % this.beats.length;
    if (own.size > limits.maxStreamsPerUser) this.replace(userId, own.values().next().value!.id, 'at this gateway process');
    try {
      // Read once the stream is registered: an erasure heard meanwhile reaches it (`erase`) and it sends nothing more.
      stream.epoch = (await holds?.epochOf(userId)) ?? 0;
      // A cursor of before the user's last erasure points into data that is gone: `erasure`, never a partial replay.
      if (positions && positions.epoch !== stream.epoch) return this.endErased(stream, stream.epoch);
      await this.pull(stream);
    } catch (error) {
      // Before the stream started, the refusal is the answer (problem+json); after, a named close.
      if (stream.started) return void stream.close('unavailable', 'the changes cannot be read now: resume with the last id');
      stream.detach();
      throw error instanceof HttpError ? error : unavailable('the changes cannot be read now: retry');
    }
    stream.catchUp = undefined;
    stream.send('ready', { cursor: this.cursor(stream) }, this.cursor(stream));
    this.share(stream);
    if (stream.again) this.schedule(stream);
  }

  /**
   * What refuses a stream before it opens: a pending erasure of the user (409, the same as every request of theirs),
   * the gateway stopping or at its cap (503). Asked before a ticket is spent, and again when the stream opens.
   */
  refuseToOpen(userId: string): void {
    if (this.options.holds?.holding(userId)) throw erasurePending();
    if (this.stopped) throw unavailable('the gateway is stopping: reconnect');
    const { maxStreams } = this.options.limits;
    if (this.count >= maxStreams) {
      throw unavailable(`this gateway process holds its maximum of streams (CHANGES_MAX_STREAMS = ${maxStreams}): retry`);
    }
  }

  /** The stream's user was erased: `erasure`, then the end; every earlier cursor is void. */
  private endErased(stream: ChangeStream, erasedAt: number): void {
    stream.send('erasure', { erased_at: erasedAt });
    stream.end('erasure');
  }

  /** The user's stream `streamId`, if it is here, ends with `replaced`: the user opened more than the cap allows. */
  private replace(userId: string, streamId: string, where: string): void {
    for (const stream of this.streams.get(userId) ?? []) {
      if (stream.id !== streamId) continue;
      this.stats.replaced++;
      const cap = this.options.limits.maxStreamsPerUser;
      stream.close('replaced', `more than CHANGES_MAX_STREAMS_PER_USER (${cap}) streams of this user ${where}: resume with the last id`);
    }
  }

  /** A stream that started is counted with the user's streams at the other replicas (distributed mode). */
  private share(stream: ChangeStream): void {
    const { registry, logger } = this.options;
    if (!registry || stream.closed) return;
    this.shared.add(stream);
    registry.opened(stream.userId, stream.id, stream.openedAt).catch((error: unknown) => {
      // The cap per process still holds; the count across replicas misses this stream until it ends.
      logger.warn({ err: (error as Error).message }, 'live sync: a stream could not be counted across replicas');
    });
  }

  /** Whether a notification names a user with an open stream here (the rest of it is checked by its schema; its key named one). */
  private watched(value: unknown): boolean {
    const userId = (value as { userId?: unknown } | null)?.userId;
    return typeof userId === 'string' && this.streams.has(userId);
  }

  /** A change of the user's data in `area` was stored: each of the user's streams pulls until it has `wanted` (the position after it). */
  announce(area: Area, userId: string, wanted: bigint, occurredAt: number): void {
    for (const stream of this.streams.get(userId) ?? []) {
      if (wanted > stream.wanted[area]) stream.wanted[area] = wanted;
      stream.announcedAt ??= occurredAt;
      this.schedule(stream);
    }
  }

  /** The user's data is being erased: each stream gets `erasure` and ends; a pull in flight sends nothing more. */
  erase(userId: string, requestedAt: number): void {
    this.options.registry?.forget(userId).catch((error: unknown) => {
      this.options.logger.warn({ err: (error as Error).message }, 'live sync: the erased user is still named among the open streams');
    });
    for (const stream of [...(this.streams.get(userId) ?? [])]) this.endErased(stream, requestedAt);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.unobserve?.();
    // Streams first: their devices reconnect to another replica while the consumers leave Kafka (seconds).
    for (const streams of [...this.streams.values()]) {
      for (const stream of [...streams]) stream.close('shutdown', 'the gateway is stopping: resume with the last id');
    }
    await this.consumer?.stop().catch(() => undefined);
    await this.options.registry?.stop().catch(() => undefined);
  }

  private cursor(stream: ChangeStream): string {
    return this.options.cursors.encode(stream.userId, { ...stream.positions!, epoch: stream.epoch });
  }

  private closed(stream: ChangeStream, reason: string): void {
    const own = this.streams.get(stream.userId);
    if (!own?.delete(stream)) return;
    this.count--;
    this.beats[stream.beat].delete(stream);
    if (own.size === 0) this.streams.delete(stream.userId);
    if (this.shared.delete(stream)) {
      this.options.registry!.closed(stream.id).catch((error: unknown) => {
        this.options.logger.warn({ err: (error as Error).message }, 'live sync: an ended stream is still counted across replicas');
      });
    }
    if (reason === 'slow-reader') {
      this.stats.slowReadersClosed++;
      recordCounter(METRICS.changesSlowReaders, 1, SERVICE);
    }
  }

  /** One pull at a time per stream; an announcement meanwhile pulls again after it. */
  private schedule(stream: ChangeStream): void {
    if (stream.closed) return;
    if (stream.pulling || !stream.started) {
      stream.again = true;
      return;
    }
    stream.again = false;
    stream.pulling = this.pullUntilShown(stream)
      .catch((error: unknown) => {
        this.options.logger.warn({ err: (error as Error).message }, 'live sync: a stream could not pull its changes');
        stream.close('unavailable', 'the changes cannot be read now: resume with the last id');
      })
      .finally(() => {
        stream.pulling = null;
        if (stream.again) this.schedule(stream);
      });
  }

  /**
   * Pulls until the service shows every announced change. The notification can come before the service's read model
   * applied it (the distributed mode's projections are asynchronous): then it asks again, with growing pauses, for at
   * most `readModelWaitMs`.
   */
  private async pullUntilShown(stream: ChangeStream): Promise<void> {
    const deadline = this.now() + (this.options.readModelWaitMs ?? 5000);
    let pause = 5;
    for (;;) {
      const applied = await this.pull(stream);
      if (stream.closed || stream.again || AREAS.every((area) => applied[area] >= stream.wanted[area])) return;
      if (this.now() >= deadline) {
        const positions = (of: Record<Area, bigint>) => Object.fromEntries(AREAS.map((area) => [area, of[area].toString()]));
        this.options.logger.warn(
          { applied: positions(applied), wanted: positions(stream.wanted) },
          'live sync: an announced change did not show in time',
        );
        return;
      }
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 200);
    }
  }

  /**
   * Sends each area's changes after the stream's positions (a new stream takes the heads); answers, per area, how far
   * the service's read model has applied the user's changes (the measure of the announced positions).
   */
  private async pull(stream: ChangeStream): Promise<Record<Area, bigint>> {
    let applied: Record<Area, bigint>;
    if (stream.positions === undefined) applied = await this.heads(stream);
    else {
      const history = await this.pullHistory(stream);
      const playlist = stream.closed ? 0n : await this.pullPlaylists(stream);
      const preference = stream.closed ? 0n : await this.pullPreferences(stream);
      const profile = stream.closed ? 0n : await this.pullProfile(stream);
      applied = { history, playlist, preference, profile };
    }
    if (stream.announcedAt !== undefined && stream.sentSinceAnnounce) {
      recordHistogram(METRICS.changesLatency, Math.max(0, this.now() - stream.announcedAt) / 1000, SERVICE);
      stream.announcedAt = undefined;
    }
    stream.sentSinceAnnounce = false;
    return applied;
  }

  /** A new stream starts at each area's head: where the service's read model stands now. */
  private async heads(stream: ChangeStream): Promise<Record<Area, bigint>> {
    const { userId } = stream;
    const { playlistUrl, preferenceUrl, profileUrl } = this.options;
    const [history, playlist, preference, profile] = await Promise.all([
      this.historyChanges(userId, undefined),
      this.serviceJson(playlistUrl, userId, '/internal/playlist/changes').then((json) => PlaylistChangesPage.parse(json)),
      this.serviceJson(preferenceUrl, userId, '/internal/preference/changes').then((json) => PreferenceChangesPage.parse(json)),
      this.serviceJson(profileUrl, userId, '/internal/profile/changes').then((json) => ProfileChangesPage.parse(json)),
    ]);
    stream.positions = {
      history: history.position,
      playlist: playlist.applied,
      preference: preference.position,
      profile: profile.applied,
      epoch: stream.epoch,
    };
    return {
      history: BigInt(history.applied),
      playlist: BigInt(playlist.applied),
      preference: BigInt(preference.applied),
      profile: BigInt(profile.applied),
    };
  }

  /**
   * A resume that would send more than it may (`behind` of the user's events after its cursor in one area, or changes
   * counted as they go) ends with `close` (`resync`): the device reads the API afresh. Checked before a change is sent
   * where the service says how far behind the cursor is, so such a resume costs one page, not a thousand changes.
   */
  private beyondReach(stream: ChangeStream, behind: number): boolean {
    if (stream.catchUp === undefined || behind <= stream.catchUp) return false;
    const { maxCatchUp } = this;
    // Charged as the whole catch-up it asked for (a request a page of 100, the stream's own counted already): a device
    // that resumes from too far back in a loop spends its user's budget, not the other users' share of the process.
    const pages = Math.ceil(maxCatchUp / 100);
    for (let page = 1; page < pages; page++) if (!(this.options.charge?.(stream.userId) ?? false)) break;
    stream.close(
      'resync',
      `more than CHANGES_MAX_CATCHUP (${maxCatchUp}) changes since this cursor: read the data again from the API, then open the stream without a cursor`,
    );
    return true;
  }

  private sendChange(stream: ChangeStream, event: Area, data: unknown): void {
    if (stream.catchUp !== undefined && stream.catchUp-- <= 0 && this.beyondReach(stream, Infinity)) return;
    stream.send(event, data, this.cursor(stream));
    stream.sentSinceAnnounce = true;
    this.stats.eventsSent++;
    recordCounter(METRICS.changesEvents, 1, SERVICE);
  }

  /**
   * A resume's next page is one more request of the user (the first was the stream's own): over their rate limit the
   * stream ends with `close` (`rate-limited`), to be resumed from its last id later.
   */
  private chargePage(stream: ChangeStream, first: boolean): boolean {
    if (stream.closed) return false;
    // The stream's first page was its own request; a live stream's pulls are not a resume's.
    if (first || stream.catchUp === undefined || (this.options.charge?.(stream.userId) ?? true)) return true;
    stream.close('rate-limited', 'more requests of this user than RATE_LIMIT_PER_USER allows: resume with the last id later');
    return false;
  }

  private async pullHistory(stream: ChangeStream): Promise<bigint> {
    for (let first = true; ; first = false) {
      if (!this.chargePage(stream, first)) return 0n;
      const page = await this.historyChanges(stream.userId, stream.positions!.history, first ? stream.catchUp : undefined);
      if (stream.closed) return BigInt(page.applied);
      if (first && this.beyondReach(stream, page.behind)) return BigInt(page.applied);
      // A pull that found nothing moves past changes that showed no entry.
      if (page.changes.length === 0) stream.positions = { ...stream.positions!, history: page.position };
      for (const change of page.changes) {
        if (stream.closed) return BigInt(page.applied);
        stream.positions = { ...stream.positions!, history: change.position };
        this.sendChange(stream, 'history', change.item);
      }
      if (!page.more) return BigInt(page.applied);
    }
  }

  private async pullPlaylists(stream: ChangeStream): Promise<bigint> {
    const page = PlaylistChangesPage.parse(
      await this.serviceJson(this.options.playlistUrl, stream.userId, `/internal/playlist/changes?since=${stream.positions!.playlist}`),
    );
    if (this.beyondReach(stream, page.applied - stream.positions!.playlist)) return BigInt(page.applied);
    return this.sendRevisions(
      stream,
      'playlist',
      page.applied,
      page.changes.map((c) => [c.position, c.playlist]),
    );
  }

  /**
   * Sends one page of an area whose positions count its events per user (playlists, the profile): each change at the
   * position after it; a page of nothing moves past changes that showed nothing (and, after an erasure, back to the new
   * beginning). Answers how far the service has applied them.
   */
  private sendRevisions(stream: ChangeStream, area: 'playlist' | 'profile', applied: number, changes: Array<[number, unknown]>): bigint {
    for (const [position, data] of changes) {
      if (stream.closed) break;
      stream.positions = { ...stream.positions!, [area]: position };
      this.sendChange(stream, area, data);
    }
    if (!stream.closed && changes.length === 0 && applied !== stream.positions![area]) {
      stream.positions = { ...stream.positions!, [area]: applied };
    }
    return BigInt(applied);
  }

  /** The keys changed after the stream's position, a page at a time (a key changed several times: once, as it is now). */
  private async pullPreferences(stream: ChangeStream): Promise<bigint> {
    for (let first = true; ; first = false) {
      if (!this.chargePage(stream, first)) return 0n;
      const page = PreferenceChangesPage.parse(
        await this.serviceJson(
          this.options.preferenceUrl,
          stream.userId,
          `/internal/preference/changes?since=${stream.positions!.preference}&limit=100`,
        ),
      );
      for (const change of page.changes) {
        if (stream.closed) return BigInt(page.applied);
        stream.positions = { ...stream.positions!, preference: change.position };
        this.sendChange(stream, 'preference', change.preference);
      }
      if (stream.closed) return BigInt(page.applied);
      stream.positions = { ...stream.positions!, preference: page.position };
      if (!page.more) return BigInt(page.applied);
    }
  }

  private async pullProfile(stream: ChangeStream): Promise<bigint> {
    const page = ProfileChangesPage.parse(
      await this.serviceJson(this.options.profileUrl, stream.userId, `/internal/profile/changes?since=${stream.positions!.profile}`),
    );
    return this.sendRevisions(
      stream,
      'profile',
      page.applied,
      page.changes.map((c) => [c.position, c.profile]),
    );
  }

  private async historyChanges(userId: string, since: string | undefined, reach?: number): Promise<HistoryChangesPage> {
    const query = since === undefined ? '' : `?since=${encodeURIComponent(since)}&limit=100${reach === undefined ? '' : `&reach=${reach}`}`;
    return HistoryChangesPage.parse(await this.serviceJson(this.options.historyUrl, userId, `/internal/history/changes${query}`));
  }

  /** A service's internal answer, asked as the user (the signed identity): the service selects by it alone. */
  private async serviceJson(baseUrl: string, userId: string, path: string): Promise<unknown> {
    let answer: ServiceAnswer;
    try {
      answer = await this.serviceGet(baseUrl, path, userId);
    } catch (error) {
      throw unavailable(`${path.split('?')[0]} cannot be reached: ${(error as Error).message}`);
    }
    if (answer.status < 200 || answer.status > 299) throw unavailable(`${path.split('?')[0]} answered ${answer.status}`);
    return answer.json;
  }
}
