import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { InternalIdentity } from '@udp/auth';
import type { Bus, Consumer } from '@udp/bus';
import { HistoryChangesPage, PlaylistChangesPage, erasureEvents, historyEvents, playlistEvents } from '@udp/contracts';
import { HttpError } from '@udp/http-kit';
import { type Logger, METRICS, observeGauge, recordCounter, recordHistogram } from '@udp/telemetry';
import type { ChangePositions, CursorCodec } from './cursor';
import { type ServiceAnswer, type ServiceGet, httpServiceGet } from './service-get';
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
}

export interface ChangeHubOptions {
  /** Where the change notifications come from: the in-process bus (embedded) or Kafka, with a consumer of our own. */
  bus: Bus;
  /** history-svc's and playlist-svc's base addresses: the changes themselves are pulled from them, as the user. */
  historyUrl: string;
  playlistUrl: string;
  identity: InternalIdentity;
  /** How the services are asked (default: over HTTP, as the user; the embedded host asks its services in process). */
  serviceGet?: ServiceGet;
  cursors: CursorCodec;
  limits: ChangeLimits;
  logger: Logger;
  now?: () => number;
  /** How long a notified change may take to show in the service's read model before the stream stops waiting for it. */
  readModelWaitMs?: number;
}

const SERVICE = { 'udp.service': 'gateway' };

type Area = 'history' | 'playlist';

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
  private count = 0;
  private consumers: Consumer[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  /** The streams by the tick of the heartbeat period that writes theirs (`beat`). */
  private readonly beats: Set<ChangeStream>[];
  private tick = 0;
  private nextBeat = 0;
  private stopped = false;
  private unobserve: (() => void) | undefined;
  private readonly now: () => number;
  private readonly serviceGet: ServiceGet;
  /** Counters for the metrics and the tests. */
  readonly stats = { eventsSent: 0, slowReadersClosed: 0, replaced: 0 };

  constructor(private readonly options: ChangeHubOptions) {
    this.now = options.now ?? Date.now;
    this.serviceGet = options.serviceGet ?? httpServiceGet(options.identity);
    const ticks = Math.max(1, Math.round((options.limits.heartbeatS * 1000) / HEARTBEAT_TICK_MS));
    this.beats = Array.from({ length: ticks }, () => new Set());
  }

  get open(): number {
    return this.count;
  }

  async start(): Promise<void> {
    const group = `gateway-changes-${randomBytes(6).toString('hex')}`;
    const { bus } = this.options;
    this.consumers.push(
      await bus.subscribe(
        historyEvents.HISTORY_CHANGES_TOPIC,
        `${group}-history`,
        async ({ value }) => {
          // Every write's notification reaches every gateway: one of a user with no open stream is not even parsed.
          if (!this.watched(value)) return;
          const message = historyEvents.HistoryChangedMessage.safeParse(value);
          if (message.success) this.announce('history', message.data.userId, message.data.revision, message.data.occurredAt);
        },
        { from: 'latest' },
      ),
      await bus.subscribe(
        playlistEvents.PLAYLISTS_CHANGES_TOPIC,
        `${group}-playlist`,
        async ({ value }) => {
          if (!this.watched(value)) return;
          const message = playlistEvents.PlaylistsChangedMessage.safeParse(value);
          if (message.success) this.announce('playlist', message.data.userId, message.data.revision, message.data.occurredAt);
        },
        { from: 'latest' },
      ),
      await bus.subscribe(
        erasureEvents.ERASURE_TOPICS.requested,
        `${group}-erasure`,
        async ({ value }) => {
          const message = erasureEvents.ErasureRequestedMessage.safeParse(value);
          if (message.success) this.erase(message.data.userId, message.data.requestedAt);
        },
        { from: 'latest' },
      ),
    );
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
    const { limits } = this.options;
    if (this.stopped) throw unavailable('the gateway is stopping: reconnect');
    if (this.count >= limits.maxStreams) {
      throw unavailable(`this gateway process holds its maximum of streams (CHANGES_MAX_STREAMS = ${limits.maxStreams}): retry`);
    }
    const stream = new ChangeStream(userId, res, limits.maxBufferBytes, this.now(), (s, reason) => this.closed(s, reason));
    stream.positions = positions;
    stream.playlistStarted = positions !== undefined;
    let own = this.streams.get(userId);
    if (!own) this.streams.set(userId, (own = new Set()));
    // Registered before the first pull: a change made meanwhile is announced to it and pulled after.
    own.add(stream);
    this.count++;
    stream.beat = this.nextBeat;
    this.beats[stream.beat].add(stream);
    this.nextBeat = (this.nextBeat + 1) % this.beats.length;
    if (own.size > limits.maxStreamsPerUser) {
      const oldest = own.values().next().value!;
      this.stats.replaced++;
      oldest.close(
        'replaced',
        `more than CHANGES_MAX_STREAMS_PER_USER (${limits.maxStreamsPerUser}) streams of this user: resume with the last id`,
      );
    }
    try {
      await this.pull(stream);
    } catch (error) {
      // Before the stream started, the refusal is the answer (problem+json); after, a named close.
      if (stream.started) return void stream.close('unavailable', 'the changes cannot be read now: resume with the last id');
      stream.detach();
      throw error instanceof HttpError ? error : unavailable('the changes cannot be read now: retry');
    }
    stream.send('ready', { cursor: this.cursor(stream) }, this.cursor(stream));
    if (stream.again) this.schedule(stream);
  }

  /** Whether a notification names a user with an open stream here (the rest of it is checked by its schema). */
  private watched(value: unknown): boolean {
    const userId = (value as { userId?: unknown } | null)?.userId;
    return typeof userId === 'string' && this.streams.has(userId);
  }

  /** A change of the user's data in `area` at `revision` was stored: each of the user's streams pulls it. */
  announce(area: Area, userId: string, revision: number, occurredAt: number): void {
    for (const stream of this.streams.get(userId) ?? []) {
      stream.wanted[area] = Math.max(stream.wanted[area], revision + 1);
      stream.announcedAt ??= occurredAt;
      this.schedule(stream);
    }
  }

  /** The user's data is being erased: each stream gets `erasure` and ends; a pull in flight sends nothing more. */
  erase(userId: string, requestedAt: number): void {
    for (const stream of [...(this.streams.get(userId) ?? [])]) {
      stream.send('erasure', { erased_at: requestedAt });
      stream.end('erasure');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.unobserve?.();
    // Streams first: their devices reconnect to another replica while the consumers leave Kafka (seconds).
    for (const streams of [...this.streams.values()]) {
      for (const stream of [...streams]) stream.close('shutdown', 'the gateway is stopping: resume with the last id');
    }
    await Promise.all(this.consumers.map((c) => c.stop().catch(() => undefined)));
  }

  private cursor(stream: ChangeStream): string {
    return this.options.cursors.encode(stream.userId, stream.positions!);
  }

  private closed(stream: ChangeStream, reason: string): void {
    const own = this.streams.get(stream.userId);
    if (!own?.delete(stream)) return;
    this.count--;
    this.beats[stream.beat].delete(stream);
    if (own.size === 0) this.streams.delete(stream.userId);
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
      if (stream.closed || stream.again || (applied.history >= stream.wanted.history && applied.playlist >= stream.wanted.playlist)) return;
      if (this.now() >= deadline) {
        this.options.logger.warn({ applied, wanted: stream.wanted }, 'live sync: an announced change did not show in time');
        return;
      }
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 200);
    }
  }

  /**
   * Sends each area's changes after the stream's positions (from the heads, for a new stream); answers how many events
   * of each area the services have applied.
   */
  private async pull(stream: ChangeStream): Promise<Record<Area, number>> {
    const history = await this.pullHistory(stream);
    const playlist = stream.closed ? 0 : await this.pullPlaylists(stream);
    if (stream.announcedAt !== undefined && stream.sentSinceAnnounce) {
      recordHistogram(METRICS.changesLatency, Math.max(0, this.now() - stream.announcedAt) / 1000, SERVICE);
      stream.announcedAt = undefined;
    }
    stream.sentSinceAnnounce = false;
    return { history, playlist };
  }

  private sendChange(stream: ChangeStream, event: Area, data: unknown): void {
    stream.send(event, data, this.cursor(stream));
    stream.sentSinceAnnounce = true;
    this.stats.eventsSent++;
    recordCounter(METRICS.changesEvents, 1, SERVICE);
  }

  private async pullHistory(stream: ChangeStream): Promise<number> {
    for (;;) {
      const since = stream.positions?.history;
      const page = await this.historyChanges(stream.userId, since);
      if (stream.closed) return page.applied;
      if (since === undefined || page.changes.length === 0) {
        // A new stream starts at the head; a pull that found nothing moves past changes that showed no entry.
        stream.positions = { playlist: stream.positions?.playlist ?? 0, history: page.position };
      }
      for (const change of page.changes) {
        if (stream.closed) return page.applied;
        stream.positions = { ...stream.positions!, history: change.position };
        this.sendChange(stream, 'history', change.item);
      }
      if (!page.more) return page.applied;
    }
  }

  private async pullPlaylists(stream: ChangeStream): Promise<number> {
    // A new stream's first pull reads the head only; a resume starts at its cursor's position.
    const since = stream.playlistStarted ? stream.positions!.playlist : undefined;
    const page = PlaylistChangesPage.parse(
      await this.serviceJson(
        this.options.playlistUrl,
        stream.userId,
        `/internal/playlist/changes${since === undefined ? '' : `?since=${since}`}`,
      ),
    );
    stream.playlistStarted = true;
    if (stream.closed) return page.applied;
    if (since === undefined) {
      stream.positions = { ...stream.positions!, playlist: page.applied };
      return page.applied;
    }
    for (const change of page.changes) {
      if (stream.closed) return page.applied;
      stream.positions = { ...stream.positions!, playlist: change.position };
      this.sendChange(stream, 'playlist', change.playlist);
    }
    // Past changes that showed nothing (and, after an erasure, back to the new beginning).
    if (page.changes.length === 0 && page.applied !== stream.positions!.playlist)
      stream.positions = { ...stream.positions!, playlist: page.applied };
    return page.applied;
  }

  private async historyChanges(userId: string, since: string | undefined): Promise<HistoryChangesPage> {
    const query = since === undefined ? '' : `?since=${encodeURIComponent(since)}&limit=100`;
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
