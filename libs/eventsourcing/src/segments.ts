import { segmentHash } from '@udp/eventstore';
import type { Collection, Document } from '@udp/readmodel';
import type { WarningLogger } from './command-handler';

/**
 * Work divided among the replicas of a service, after Axon's tracking processors and Marten's async daemon: the
 * streams of a projection are split into a fixed number of segments by a hash of their user; each segment has its own
 * checkpoint and a claim (owner, lease expiry) in the service's read-model store, taken and renewed by atomic
 * conditional updates. Each replica claims a fair share (segments / live replicas) and renews its leases; a replica
 * that stops releases its claims, one that dies loses them when its lease runs out, and another takes the segment
 * over from its checkpoint. docs/deployment.md, "Scaling out", says how to size them.
 */
export interface SegmentsOptions {
  /** How many segments (fixed for a deployment: changing it re-reads every segment from the lowest checkpoint). */
  count: number;
  /** How long a claim holds without renewal; renewed every third of it. */
  leaseMs: number;
  /** This replica's id: unique per process. */
  owner: string;
  /** Where claims, checkpoints and live replicas are kept (one collection shared by the replicas). */
  collection: Collection<SegmentDocument>;
  logger?: WarningLogger;
}

/** A segment's claim and checkpoint, or a replica's heartbeat. */
export interface SegmentDocument extends Document {
  /** The projection (or publisher) whose work it divides. */
  group: string;
  kind: 'segment' | 'replica';
  segment: number;
  /** The replica holding the claim, or null when free. */
  owner: string | null;
  /** Milliseconds since the epoch until which the claim (or the replica's heartbeat) holds. */
  leaseUntil: number;
  /** The store position up to which the segment's events are applied (decimal), or null before any. */
  position: string | null;
  /** How many segments the group had when this one was made: a change of PROJECTION_SEGMENTS is seen at start. */
  count?: number;
  /** Only for creating a document once (`upsertIfNewer`); heartbeats count it up. */
  revision: number;
}

export const SEGMENTS_COLLECTION = 'projection_segments';

/**
 * The segment of a stream: by its user, the first part of its name after the category prefix (`history-<user>`). The
 * hash is the event store's (`segmentHash`): the PostgreSQL store keeps it per event, so a replica reads only its
 * segments (`SubscriptionOptions.segments`).
 */
export function segmentOf(streamId: string, prefixes: readonly string[], count: number): number {
  const prefix = prefixes.find((p) => streamId.startsWith(p)) ?? '';
  const key = streamId.slice(prefix.length).split('/')[0];
  return segmentHash(key) % count;
}

/** What the claims tell the projector. */
export interface SegmentListener {
  /** Segments this replica now holds, with their checkpoints (already in `held`). */
  gained(segments: Map<number, bigint | undefined>): void;
  /** Segments this replica no longer holds (released, or taken over after its lease ran out). */
  lost(segments: number[]): void;
  /** After each round: the leases are renewed (the projector moves idle segments' checkpoints on). */
  renewed?(): Promise<void>;
}

/** The claims of one group (a projection) for this replica. */
export class SegmentClaims {
  /** Held segments and their checkpoints. */
  readonly held = new Map<number, bigint | undefined>();
  private timer: NodeJS.Timeout | null = null;
  private early: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private heartbeat = 0;

  constructor(
    private readonly group: string,
    private readonly options: SegmentsOptions,
    private readonly listener: SegmentListener,
  ) {}

  private segmentId = (segment: number) => `${this.group}/segment/${segment}`;
  private replicaId = () => `${this.group}/replica/${this.options.owner}`;

  /**
   * Creates the segments missing (from `initial`, the checkpoint before segments existed), claims a share, renews
   * every lease/3. Segments made for another count (PROJECTION_SEGMENTS changed) are made again, all from the lowest
   * checkpoint of the old ones: a stream's segment changes with the count, so no old checkpoint holds for it.
   */
  async start(initial: bigint | null): Promise<void> {
    const { collection, count } = this.options;
    let from = initial === null ? null : initial.toString();
    const existing = await collection.find({ group: this.group, kind: 'segment' });
    if (existing.some((d) => d.count !== count || d.segment >= count)) {
      const positions = existing.map((d) => d.position);
      from = positions.some((p) => p === null) ? null : positions.reduce((a, b) => (BigInt(b!) < BigInt(a!) ? b : a));
      await collection.deleteMany({ group: this.group, kind: 'segment' });
      this.options.logger?.warn(
        { group: this.group, segments: count, before: existing.length, from },
        'segment count changed: every segment starts again from the lowest checkpoint',
      );
    }
    for (let segment = 0; segment < count; segment++) {
      await collection.upsertIfNewer({
        _id: this.segmentId(segment),
        group: this.group,
        kind: 'segment',
        segment,
        count,
        owner: null,
        leaseUntil: 0,
        position: from,
        revision: 0,
      });
    }
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.roundInterval);
    this.timer.unref();
  }

  /** Rounds run every third of the lease: a claim is renewed twice before it could run out. */
  private get roundInterval(): number {
    return Math.max(50, Math.floor(this.options.leaseMs / 3));
  }

  /** One round: heartbeat, renew, give back what is over the fair share, claim what is free up to it. */
  tick(): Promise<void> {
    return (this.ticking ??= this.round()
      .catch((error: unknown) =>
        this.options.logger?.warn({ err: error, group: this.group }, 'segment claims: round failed; next one retries'),
      )
      .finally(() => (this.ticking = null)));
  }

  private async round(): Promise<void> {
    const { collection, count, leaseMs, owner } = this.options;
    const now = Date.now();
    this.heartbeat = Math.max(this.heartbeat + 1, now);
    await collection.upsertIfNewer({
      _id: this.replicaId(),
      group: this.group,
      kind: 'replica',
      segment: -1,
      owner,
      leaseUntil: now + leaseMs,
      position: null,
      revision: this.heartbeat,
    });
    const live = await collection.count({ group: this.group, kind: 'replica', leaseUntil: { $gt: now } });
    const fair = Math.ceil(count / Math.max(1, live));
    const segments = await collection.find({ group: this.group, kind: 'segment' });
    this.roundAtNextExpiry(segments, now);

    const lost: number[] = [];
    for (const segment of this.held.keys()) {
      const renewed = await collection.updateMany({ _id: this.segmentId(segment), owner }, { leaseUntil: now + leaseMs });
      if (renewed === 0) lost.push(segment);
    }
    // Over the fair share (a replica joined): the highest segments go back, for the newcomer to take.
    const surplus = [...this.held.keys()].filter((s) => !lost.includes(s)).sort((a, b) => b - a);
    const release = surplus.slice(0, Math.max(0, surplus.length - fair));
    for (const segment of release) {
      await collection.updateMany({ _id: this.segmentId(segment), owner }, { owner: null, leaseUntil: 0 });
      lost.push(segment);
    }
    if (lost.length) {
      for (const segment of lost) this.held.delete(segment);
      this.listener.lost(lost);
    }

    if (this.held.size >= fair) return void (await this.listener.renewed?.());
    const gained = new Map<number, bigint | undefined>();
    const free = segments.filter((doc) => doc.owner === null || doc.leaseUntil < now);
    for (const doc of free.sort((a, b) => a.segment - b.segment)) {
      if (this.held.size + gained.size >= fair) break;
      // Atomic: only one replica's update matches a free or expired claim.
      const claimed = await collection.updateMany(
        { _id: doc._id, $or: [{ owner: null }, { leaseUntil: { $lt: now } }] },
        { owner, leaseUntil: now + leaseMs },
      );
      if (claimed === 0) continue;
      // Read after the claim: the checkpoint as the previous owner left it.
      const current = await collection.get(doc._id);
      gained.set(doc.segment, current?.position ? BigInt(current.position) : undefined);
    }
    if (gained.size) {
      for (const [segment, position] of gained) this.held.set(segment, position);
      this.listener.gained(gained);
    }
    await this.listener.renewed?.();
  }

  /**
   * A live replica renews every third of the lease, so another's claim nearer its end than one round has not been
   * renewed for two rounds: that replica stopped answering. One more round right after it runs out takes its
   * segments over then, not up to a round later (a takeover in about one lease after a crash, not up to 4/3).
   */
  private roundAtNextExpiry(segments: SegmentDocument[], now: number): void {
    const interval = this.roundInterval;
    const expiring = segments.filter((doc) => doc.owner !== null && doc.owner !== this.options.owner && doc.leaseUntil > now);
    const soonest = Math.min(...expiring.map((doc) => doc.leaseUntil));
    if (!Number.isFinite(soonest) || soonest - now >= interval || this.timer === null) return;
    if (this.early) clearTimeout(this.early);
    // After the round under way, if one is: that one read the claim before it ran out.
    this.early = setTimeout(() => void (this.ticking ?? Promise.resolve()).then(() => this.tick()), soonest - now + 20);
    this.early.unref();
  }

  /**
   * Saves a segment's checkpoint, only while this replica holds the claim: false when it does not (taken over), so
   * a replica that lost a segment never moves its checkpoint. `saved` records it once committed (a projector's save
   * may be in the transaction of its batch, which can still fail).
   */
  async save(segment: number, position: bigint): Promise<boolean> {
    const saved = await this.options.collection.updateMany(
      { _id: this.segmentId(segment), owner: this.options.owner },
      { position: position.toString() },
    );
    return saved > 0;
  }

  /**
   * Moves the checkpoints of `segments` up to `position` in one update (a projector's batch: every event of them up to
   * it applied), only while this replica holds them. Returns the segments it no longer holds (each then asked alone).
   * `saved` records the others once committed.
   */
  async saveMany(segments: number[], position: bigint): Promise<number[]> {
    if (segments.length === 0) return [];
    if (segments.length === 1) return (await this.save(segments[0], position)) ? [] : segments;
    const saved = await this.options.collection.updateMany(
      { _id: { $in: segments.map(this.segmentId) }, owner: this.options.owner },
      { position: position.toString() },
    );
    if (saved === segments.length) return [];
    const lost: number[] = [];
    for (const segment of segments) if (!(await this.save(segment, position))) lost.push(segment);
    return lost;
  }

  /**
   * The checkpoints of `segments` stored at `position` (their save committed): those still held are taken up from there
   * by a resubscription. Only once committed: a held checkpoint ahead of the stored one would skip events for good.
   */
  saved(segments: Iterable<number>, position: bigint): void {
    for (const segment of segments) if (this.held.has(segment)) this.held.set(segment, position);
  }

  /** Writes waiting for another replica's segment: one poll of the stored checkpoint per segment, whatever the number of writes. */
  private readonly remoteWaits = new Map<number, Array<{ position: bigint; deadline: number; resolve: (seen: boolean) => void }>>();

  /**
   * Resolves true once the stored checkpoint of `segment` (whichever replica holds it) has reached `position`; false
   * after `timeoutMs`. Read-your-writes for a write whose segment another replica applies.
   */
  waitForCheckpoint(segment: number, position: bigint, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waits = this.remoteWaits.get(segment);
      const wait = { position, deadline: Date.now() + timeoutMs, resolve };
      if (waits) return void waits.push(wait);
      this.remoteWaits.set(segment, [wait]);
      void this.pollCheckpoint(segment);
    });
  }

  private async pollCheckpoint(segment: number): Promise<void> {
    for (;;) {
      const waits = this.remoteWaits.get(segment)!;
      const doc = await this.options.collection.get(this.segmentId(segment)).catch(() => null);
      const stored = doc?.position ? BigInt(doc.position) : undefined;
      const now = Date.now();
      const waiting = waits.filter((w) => {
        if (stored !== undefined && stored >= w.position) return void w.resolve(true);
        if (now >= w.deadline) return void w.resolve(false);
        return true;
      });
      if (waiting.length === 0) return void this.remoteWaits.delete(segment);
      this.remoteWaits.set(segment, waiting);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops renewing and releases every claim and the heartbeat, so the others take over at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.early) clearTimeout(this.early);
    this.timer = null;
    while (this.ticking) await this.ticking;
    const { collection, owner } = this.options;
    for (const segment of this.held.keys()) {
      await collection.updateMany({ _id: this.segmentId(segment), owner }, { owner: null, leaseUntil: 0 });
    }
    this.held.clear();
    await collection.updateMany({ _id: this.replicaId() }, { leaseUntil: 0 });
  }
}
