import { createHmac, randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Bus, Consumer } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { type HttpError, erasurePending } from '@udp/http-kit';
import { HeldUsers, refuseHeldUsers } from './edge-checks';
import type { Collection } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';

/** How long a request heard holds the user when neither its completion nor its re-publication (every 30 s) is heard. */
const DEFAULT_HOLD_MS = 120_000;
/** Completions remembered, so that a request heard after its completion (another topic, another order) holds nothing. */
const COMPLETED_KEPT = 10_000;

/** One erased user's epoch: the time their last erasure was requested, kept under a keyed hash of the user id. */
export interface ErasureEpochRow {
  _id: string;
  epoch: number;
  revision: number;
}

export interface ErasureHoldsOptions {
  bus: Bus;
  /** Where the epochs are kept: the gateway's store (SQLite in DATA_DIR embedded, MongoDB distributed). */
  epochs: Collection<ErasureEpochRow>;
  /** The key of the hash that names a user among the epochs (derived from INTERNAL_AUTH_SECRET: every replica's). */
  key: Buffer;
  logger: Logger;
  /** How long a request heard holds the user without its completion or its re-publication (default 120 s). */
  holdMs?: number;
  now?: () => number;
}

/**
 * The gateway's side of an erasure as one moment (docs/erasure.md, "The erasure boundary"). From the moment
 * `DELETE /api/data` reaches this process (or this process hears `userdata.erasure.requested`, from whichever replica
 * it came) until it hears `userdata.erasure.completed` (or the DELETE answered 204: completed), every request of the
 * user but the erasure's own is refused with 409 `erasure-pending` and `Retry-After`: nobody reads a half-erased state,
 * and no write is acknowledged that the erasure could take or leave half-applied.
 *
 * It also keeps each erased user's epoch (when their last erasure was requested) under a keyed hash of the id: a
 * live-sync cursor seals the epoch it was issued in, and one of an earlier epoch is answered with `erasure`.
 */
export class ErasureHolds {
  private readonly held: HeldUsers;
  private readonly completed = new Set<string>();
  private readonly holdMs: number;
  private readonly now: () => number;
  private consumer: Consumer | undefined;
  /** For the user's routes, after authentication (in edge-checks.ts: the part every request runs). */
  readonly check: RequestHandler;

  constructor(private readonly options: ErasureHoldsOptions) {
    this.holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
    this.now = options.now ?? Date.now;
    this.held = new HeldUsers(this.now);
    this.check = refuseHeldUsers(this.held, (userId, res) => this.track(userId, res));
  }

  /**
   * Follows the erasure topics with groups of this process's own. The embedded bus starts empty at each start, so from
   * its oldest message: the coordinator publishes the pending erasures again at its start, before the gateway is up.
   */
  async start(): Promise<void> {
    const { bus } = this.options;
    const group = `gateway-erasures-${randomBytes(6).toString('hex')}`;
    const from = bus.durable ? 'latest' : 'oldest';
    const { ERASURE_TOPICS, ErasureRequestedMessage, ErasureCompletedMessage } = erasureEvents;
    // One consumer for both topics (one group join, one set of fetches). Every user's erasures, not only those of the
    // users with requests here: the hold is the erasure boundary of every replica.
    this.consumer = await bus.subscribe(
      [ERASURE_TOPICS.requested, ERASURE_TOPICS.completed],
      group,
      async ({ topic, value }) => {
        if (topic === ERASURE_TOPICS.requested) {
          const message = ErasureRequestedMessage.safeParse(value);
          if (message.success) await this.requested(message.data.userId, message.data.erasureId, message.data.requestedAt);
        } else {
          const message = ErasureCompletedMessage.safeParse(value);
          if (message.success) this.release(message.data.userId, message.data.erasureId);
        }
      },
      { from },
    );
  }

  async stop(): Promise<void> {
    await this.consumer?.stop().catch(() => undefined);
  }

  /** Whether the user's requests are refused now. */
  holding(userId: string): boolean {
    return this.held.holding(userId);
  }

  /** The refusal of a request of the user now, if they are held (for routes that authenticate by themselves). */
  readonly refusal = (userId: string): HttpError | undefined => (this.held.holding(userId) ? erasurePending() : undefined);

  /** The user's erasure epoch: when their last erasure was requested, 0 if none is known. */
  async epochOf(userId: string): Promise<number> {
    return (await this.options.epochs.get(this.nameOf(userId)))?.epoch ?? 0;
  }

  /** The user's `DELETE /api/data` holds them while it runs; a 202 holds them until its erasure completes. */
  private track(userId: string, res: Response): void {
    this.held.request(userId, 1);
    res.once('close', () => {
      if (res.statusCode === 202) {
        // Its Location names the erasure (/api/data/erasure/<id>): held until that one completes.
        const erasureId = String(res.getHeader('location') ?? '')
          .split('/')
          .pop();
        if (erasureId && !this.completed.has(erasureId)) this.held.hold(userId, erasureId, this.now() + this.holdMs);
      } else if (res.statusCode === 204) {
        // Completed: whatever was heard of it is over (its completion may still be on its way over Kafka).
        this.held.release(userId);
      }
      this.held.request(userId, -1);
    });
  }

  /** A request heard: the user is held, their epoch recorded (before any cursor of theirs is looked at again). */
  private async requested(userId: string, erasureId: string, requestedAt: number): Promise<void> {
    if (!this.completed.has(erasureId)) this.held.hold(userId, erasureId, this.now() + this.holdMs);
    // The erasure's id only: the log does not say whose data it is.
    this.options.logger.info({ erasureId }, "erasure heard: the user's requests are refused until it completes");
    // The newest erasure's time wins (a request published again, or an older one heard late, changes nothing).
    await this.options.epochs.upsertIfNewer({ _id: this.nameOf(userId), epoch: requestedAt, revision: requestedAt });
  }

  private release(userId: string, erasureId: string): void {
    this.completed.add(erasureId);
    if (this.completed.size > COMPLETED_KEPT) this.completed.delete(this.completed.values().next().value!);
    this.held.release(userId, erasureId);
  }

  /** A keyed hash: the epochs name no user to whoever reads the store without the key. */
  private nameOf(userId: string): string {
    return createHmac('sha256', this.options.key).update(userId).digest('base64url');
  }
}
