import { erasureEvents } from '@udp/contracts';
import type { EventStore } from '@udp/eventstore';
import type { Filter, ReadModelStore } from '@udp/readmodel';
import type { MessagePublisher } from './integration-publisher';

/** What erasure needs of a bus (the bus port's shape), so this package depends on no adapter. */
export interface ErasureBus extends MessagePublisher {
  subscribe(
    topic: string,
    groupId: string,
    handler: (message: { key: string; value: Record<string, unknown> }) => Promise<void>,
  ): Promise<{ stop(): Promise<void> }>;
}

/** Documents of one user in one read-model collection. */
export interface UserDocuments {
  collection: string;
  filter: Filter;
}

/** The projector's part in an erasure (the `Projector` class has it). */
export interface ErasableProjector {
  /** Resolves once every event stored so far was applied (events of deleted streams are never delivered again). */
  caughtUp(): Promise<void>;
  /** Drops what the projector remembers of a stream, so a stream started afresh is waited for from revision 0. */
  forget(streamId: string): void;
}

export interface ErasureLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface ErasureParticipantOptions {
  /** The participant's name in confirmations, and its consumer group. */
  service: string;
  bus: ErasureBus;
  store: EventStore;
  readModels: ReadModelStore;
  /** Every stream of the user in this service's store (from the service's own `domain/events.ts`). */
  streamsOfUser(userId: string): string[] | Promise<string[]>;
  /** Every read-model document of the user. Asked before the streams are deleted (it may read them). */
  documentsOfUser(userId: string): UserDocuments[] | Promise<UserDocuments[]>;
  /** The service's read-model projectors: caught up before documents are deleted, so none comes back. */
  projectors: ErasableProjector[];
  /**
   * The service's requests of the user (UserGate): refused from the start of the user's erasure here to its end, which
   * waits for those under way, so that no write lands between the deletion of the streams and that of the documents.
   */
  gate?: { close(userId: string): Promise<void>; open(userId: string): void };
  /** The write side's folded states (in memory and as snapshots: they hold the user's data too). */
  states?: Array<{ forget(streamId: string): Promise<void> }>;
  /**
   * The service's own work before the user's streams are deleted (export-worker: stop the user's exports in flight
   * and remove their files). Asked after `streamsOfUser` and `documentsOfUser`; must be safe to repeat.
   */
  beforeStreamsDeleted?(userId: string): Promise<void>;
  logger?: ErasureLogger;
  now?: () => number;
}

export interface ErasureResult {
  streamsDeleted: number;
  documentsDeleted: number;
}

export interface ErasureParticipant {
  /**
   * Erases the user's data in this service (what a request on the bus triggers). Safe to repeat; a call while the
   * user's erasure runs joins it (same `erasureId`) or runs once after it.
   */
  erase(userId: string, erasureId?: string): Promise<ErasureResult>;
  stop(): Promise<void>;
}

export const ERASURES_DONE = '_erasures_done';

/** How long an erasure waits for the user's writes under way to end before it goes on. */
const GATE_DRAIN_MS = 10_000;

/**
 * One service's part in a user-data erasure: on `userdata.erasure.requested` it deletes the user's streams,
 * read-model documents and in-memory states, then confirms on `userdata.erasure.confirmed`. Delivery is at
 * least once: a redelivered request confirms again without erasing twice (done requests are remembered by
 * erasure id), and one that was cut off half-way is done again from the start, deletion being idempotent.
 * A failure throws, so the bus delivers the request again later; nothing is confirmed that was not done.
 */
export async function erasureParticipant(options: ErasureParticipantOptions): Promise<ErasureParticipant> {
  const { service, bus, store, readModels, logger } = options;
  const now = options.now ?? Date.now;
  // Erasures done, by erasure id (no user id: nothing here says who was erased).
  const handled = readModels.collection<{ _id: string; revision: number } & ErasureResult>(ERASURES_DONE);

  /** Erases the user's data once; `ms` says how long each step took (for the log: where an erasure's time goes). */
  const eraseOnce = async (userId: string): Promise<ErasureResult & { ms: Record<string, number> }> => {
    let mark = performance.now();
    const ms: Record<string, number> = {};
    const step = (name: string) => {
      const at = performance.now();
      ms[name] = Math.round(at - mark);
      mark = at;
    };
    // A request that does not end (a reader that takes its answer slowly) does not hold the erasure up for long.
    if (options.gate) {
      let bounded: NodeJS.Timeout | undefined;
      await Promise.race([options.gate.close(userId), new Promise((r) => (bounded = setTimeout(r, GATE_DRAIN_MS)))]);
      clearTimeout(bounded);
    }
    try {
      step('drained');
      return { ...(await eraseWhileClosed(userId, step)), ms };
    } finally {
      options.gate?.open(userId);
    }
  };
  const eraseWhileClosed = async (userId: string, step: (name: string) => void): Promise<ErasureResult> => {
    const streams = await options.streamsOfUser(userId);
    const documents = await options.documentsOfUser(userId);
    await options.beforeStreamsDeleted?.(userId);
    step('found');
    let streamsDeleted = 0;
    for (const streamId of streams) {
      // Whether it exists, without reading its events (a history can hold 100,000 of them).
      if ((await store.readStream(streamId, { fromRevision: Number.MAX_SAFE_INTEGER })).revision >= 0) streamsDeleted++;
      await store.deleteStream(streamId);
    }
    step('streams');
    // An event read before the deletion may still be on its way into a read model: let it land first.
    for (const projector of options.projectors) await projector.caughtUp();
    step('caughtUp');
    let documentsDeleted = 0;
    for (const { collection, filter } of documents) documentsDeleted += await readModels.collection(collection).deleteMany(filter);
    step('documents');
    await readModels.scrub?.();
    step('scrub');
    for (const streamId of streams) {
      for (const projector of options.projectors) projector.forget(streamId);
      for (const states of options.states ?? []) await states.forget(streamId);
    }
    step('states');
    // What may stay of their documents in the store's files (sealed collections on PostgreSQL) is unreadable once
    // their key goes: after the states, whose snapshots are documents too.
    await readModels.forgetOwner?.(userId);
    step('keys');
    return { streamsDeleted, documentsDeleted };
  };
  // One run per user at a time. A request for an erasure that is under way (delivered again, or published again by
  // the coordinator while it ran) joins it; a new erasure of the same user waits for it and then runs once more
  // (what the user wrote in between goes too), shared by every request that arrives meanwhile.
  const runs = new Map<string, Array<{ erasureIds: Set<string>; result: ReturnType<typeof eraseOnce> }>>();
  const erase = (userId: string, erasureId?: string): ReturnType<typeof eraseOnce> => {
    const queue = runs.get(userId) ?? [];
    const joined = queue.find((run, i) => (erasureId !== undefined && run.erasureIds.has(erasureId)) || i === 1);
    if (joined) {
      if (erasureId !== undefined) joined.erasureIds.add(erasureId);
      return joined.result;
    }
    const before = queue.length ? queue[0].result.catch(() => undefined) : Promise.resolve();
    const erasureIds = new Set(erasureId === undefined ? [] : [erasureId]);
    const result = before.then(() => eraseOnce(userId));
    const run = { erasureIds, result };
    // One line per run (the erasure ids and counts only: it does not say whose data it was), however many joined it.
    result.then(
      ({ streamsDeleted, documentsDeleted, ms }) =>
        logger?.info({ erasureIds: [...erasureIds], streamsDeleted, documentsDeleted, ms }, 'user data erased'),
      () => undefined,
    );
    const leave = () => {
      queue.splice(queue.indexOf(run), 1);
      if (queue.length === 0) runs.delete(userId);
    };
    run.result.then(leave, leave);
    queue.push(run);
    runs.set(userId, queue);
    return run.result;
  };

  const consumer = await bus.subscribe(erasureEvents.ERASURE_TOPICS.requested, `${service}-erasure`, async (message) => {
    const parsed = erasureEvents.ErasureRequestedMessage.safeParse(message.value);
    if (!parsed.success) {
      // Redelivering a malformed request would only block the ones behind it.
      logger?.warn(
        { topic: erasureEvents.ERASURE_TOPICS.requested, issues: parsed.error.issues.map((i) => i.path.join('.')) },
        'erasure request ignored: malformed',
      );
      return;
    }
    const { erasureId, userId, participants } = parsed.data;
    // A request published again names only the participants that have not confirmed: the others have nothing to do.
    if (participants && !participants.includes(service)) return;
    // Said when it arrives too (the id only): an erasure that takes long shows where it is before it is done.
    logger?.info({ erasureId }, 'erasure requested');
    // A request delivered again after it was done must not erase what the user wrote since: it confirms again.
    const done = await handled.get(erasureId);
    const { streamsDeleted, documentsDeleted } = done
      ? done
      : await erase(userId, erasureId).catch((error: unknown) => {
          // Delivered again (and tried again) by the bus; said here, or a stuck erasure would show nowhere.
          logger?.warn({ erasureId, err: error }, 'erasing user data failed; the request will be handled again');
          throw error;
        });
    const result = { streamsDeleted, documentsDeleted };
    if (!done) await handled.upsertIfNewer({ _id: erasureId, revision: 0, ...result });
    const confirmation: erasureEvents.ErasureConfirmedMessage = { erasureId, userId, service, ...result, confirmedAt: now() };
    await bus.publish(erasureEvents.ERASURE_TOPICS.confirmed, [{ key: userId, value: confirmation }]);
    logger?.info({ erasureId, again: Boolean(done) }, 'user data erasure confirmed');
  });

  return { erase, stop: () => consumer.stop() };
}
