import type { Bus, Consumer } from '@udp/bus';
import type { ReadModelStore } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';

/** Where a replica's request to end a stream it does not hold goes: the replica that holds it ends it (`replaced`). */
export const STREAM_REPLACED_TOPIC = 'gateway.changes.replaced.v1';

/**
 * A user's streams across the gateway replicas, so that CHANGES_MAX_STREAMS_PER_USER holds per user, not per replica.
 * One process alone (embedded mode) needs none: the hub counts its own streams.
 */
export interface StreamRegistry {
  /** Starts following the requests to end streams: `end` is called for a stream of this replica's to end. */
  start(end: (userId: string, streamId: string) => void): Promise<void>;
  /** A stream opened here; the user's oldest streams beyond the cap, wherever they are, are asked to end. */
  opened(userId: string, streamId: string, openedAt: number): Promise<void>;
  closed(streamId: string): Promise<void>;
  /** The user's data is being erased: no row names them any more. */
  forget(userId: string): Promise<void>;
  stop(): Promise<void>;
}

interface StreamRow {
  _id: string;
  revision: number;
  user_id: string;
  replica: string;
  opened_at: number;
}

interface ReplicaRow {
  _id: string;
  revision: number;
  alive_until: number;
}

export interface SharedStreamRegistryOptions {
  /** The replicas' shared read-model store (MongoDB in the distributed mode). */
  store: ReadModelStore;
  bus: Bus;
  /** This replica's id (unique per process start). */
  replica: string;
  maxStreamsPerUser: number;
  logger: Logger;
  now?: () => number;
  /** How often a replica says it is alive; a replica silent for three of these is taken for gone with its streams. */
  renewMs?: number;
}

/**
 * The streams of every replica in two collections: `change_streams` (a row per open stream: user, replica, opened)
 * and `gateway_replicas` (each replica's "alive until", renewed every `renewMs`). A replica that dies without closing
 * its streams leaves rows that stop counting once its "alive until" passes, and are deleted by the next renewal of any
 * replica (or the next open of the same user). A stream beyond the cap at another replica is asked to end on Kafka (STREAM_REPLACED_TOPIC); every
 * replica follows that topic with a group of its own and ends the streams named for it.
 */
export class SharedStreamRegistry implements StreamRegistry {
  private readonly now: () => number;
  private readonly renewMs: number;
  private renewTimer: NodeJS.Timeout | undefined;
  private consumer: Consumer | undefined;

  constructor(private readonly options: SharedStreamRegistryOptions) {
    this.now = options.now ?? Date.now;
    this.renewMs = options.renewMs ?? 10_000;
  }

  private get streams() {
    return this.options.store.collection<StreamRow>('change_streams');
  }

  private get replicas() {
    return this.options.store.collection<ReplicaRow>('gateway_replicas');
  }

  async start(end: (userId: string, streamId: string) => void): Promise<void> {
    await this.options.store.ensureIndex('change_streams', { user_id: 1, opened_at: -1 });
    await this.renew();
    this.renewTimer = setInterval(() => {
      this.renew().catch((error: unknown) => this.options.logger.warn({ err: error }, 'live-sync replica renewal failed'));
    }, this.renewMs);
    this.renewTimer.unref();
    this.consumer = await this.options.bus.subscribe(
      STREAM_REPLACED_TOPIC,
      `gateway-changes-${this.options.replica}-replaced`,
      async ({ value }) => {
        if (value.replica === this.options.replica && typeof value.userId === 'string' && typeof value.streamId === 'string') {
          end(value.userId, value.streamId);
        }
      },
      { from: 'latest' },
    );
  }

  /** Says this replica is alive, and forgets the replicas that stopped saying so, with their streams. */
  private async renew(): Promise<void> {
    const now = this.now();
    await this.replicas.upsertIfNewer({ _id: this.options.replica, revision: now, alive_until: now + 3 * this.renewMs });
    const gone = (await this.replicas.find({ alive_until: { $lt: now } })).map((row) => row._id);
    if (gone.length === 0) return;
    await this.streams.deleteMany({ replica: { $in: gone } });
    await this.replicas.deleteMany({ _id: { $in: gone } });
  }

  async opened(userId: string, streamId: string, openedAt: number): Promise<void> {
    const { replica, maxStreamsPerUser } = this.options;
    await this.streams.upsertIfNewer({ _id: streamId, revision: 1, user_id: userId, replica, opened_at: openedAt });
    const rows = await this.streams.find({ user_id: userId }, { sort: { opened_at: -1 } });
    const others = [...new Set(rows.map((row) => row.replica).filter((r) => r !== replica))];
    const now = this.now();
    const alive = new Set([replica]);
    if (others.length > 0) {
      for (const row of await this.replicas.find({ _id: { $in: others } })) if (row.alive_until > now) alive.add(row._id);
    }
    const gone = rows.filter((row) => !alive.has(row.replica));
    if (gone.length > 0) await this.streams.deleteMany({ _id: { $in: gone.map((row) => row._id) } });
    const beyond = rows.filter((row) => alive.has(row.replica)).slice(maxStreamsPerUser);
    if (beyond.length > 0) {
      await this.options.bus.publish(
        STREAM_REPLACED_TOPIC,
        beyond.map((row) => ({ key: userId, value: { userId, streamId: row._id, replica: row.replica } })),
      );
    }
  }

  async closed(streamId: string): Promise<void> {
    await this.streams.deleteMany({ _id: streamId });
  }

  async forget(userId: string): Promise<void> {
    await this.streams.deleteMany({ user_id: userId });
  }

  async stop(): Promise<void> {
    clearInterval(this.renewTimer);
    await this.consumer?.stop();
    await this.streams.deleteMany({ replica: this.options.replica });
    await this.replicas.deleteMany({ _id: this.options.replica });
  }
}
