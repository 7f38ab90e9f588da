import { createHash, randomUUID } from 'node:crypto';
import type { Bus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { type CommandHandler, type Projector, currentState } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import type { Collection } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { type ErasureCommand, type ErasureState, allConfirmed } from '../domain/erasure-decider';
import {
  type ErasureEvent,
  type PendingErasureEvent,
  erasureAggregate,
  erasureStreamId,
  parsePendingErasure,
  pendingErasureStreamId,
} from '../domain/aggregate';
import type { ErasureRow } from '../projections/erasures';

const { ERASURE_TOPICS } = erasureEvents;
export const PARTICIPANT = 'export-worker';

/** The erasure record names its user only through this hash, so it keeps no user id after the erasure. */
export const userHash = (erasureId: string, userId: string) => createHash('sha256').update(`${erasureId}\u0000${userId}`).digest('hex');

export interface CoordinatorDeps {
  store: EventStore;
  /** The erasure aggregate's command handler (its writes wait for the erasures projector). */
  handle: CommandHandler<ErasureCommand, ErasureEvent, ErasureState, string>;
  projector: Pick<Projector, 'waitFor'>;
  /** The erasure statuses: where the erasures still pending are found. */
  erasures: Collection<ErasureRow>;
  bus: Bus;
  participants: string[];
  timeoutMs: number;
  now: () => number;
  logger: Logger;
}

/**
 * `DELETE /api/data`: records the erasure on its own stream, keeps its user on a stream of its own until it
 * completes, publishes `requested`, and waits (bounded) until every participant confirmed. Confirmations are
 * recorded by whichever instance receives them; the last one publishes `completed`, deletes the user's record and
 * then records the completion (a crash in between does it again: at least once).
 *
 * An accepted erasure is a promise: `resume` publishes the request again, to the participants that have not
 * confirmed, for every erasure still pending (at start and periodically), so it completes after any crash of the
 * coordinator (before it published) or of a participant (before it confirmed), whatever the bus kept.
 */
export function erasureCoordinator(deps: CoordinatorDeps) {
  async function request(userId: string): Promise<{ erasureId: string; completed: boolean }> {
    const erasureId = randomUUID();
    const { newState } = await deps.handle(erasureId, {
      type: 'RequestErasure',
      data: { erasureId, userHash: userHash(erasureId, userId), participants: deps.participants },
    });
    // After the record (a crash between the two leaves a pending erasure without a user, never accepted: no user
    // id left behind), before the answer (every accepted erasure can be published again).
    const held: PendingErasureEvent = { type: 'PendingErasureRecorded', data: { userId } };
    await deps.store.appendToStream(pendingErasureStreamId(erasureId), [{ id: randomUUID(), ...held }], { expectedRevision: 'no_stream' });
    const message: erasureEvents.ErasureRequestedMessage = { erasureId, userId, requestedAt: newState.requestedAt };
    await deps.bus.publish(ERASURE_TOPICS.requested, [{ key: userId, value: message }]);
    // Requested is revision 0, each participant confirms once, completed comes last.
    const completed = await deps.projector.waitFor(erasureStreamId(erasureId), deps.participants.length + 1, deps.timeoutMs);
    return { erasureId, completed };
  }

  /** The user of an erasure not completed yet; undefined once its record is deleted (or was never written). */
  async function pendingUser(erasureId: string): Promise<string | undefined> {
    const { events } = await deps.store.readStream(pendingErasureStreamId(erasureId));
    return events.length ? parsePendingErasure({ type: events[0].type, data: events[0].data }).data.userId : undefined;
  }

  /** Every participant confirmed: `completed` is published, the user's record deleted, the completion recorded. */
  async function complete(erasureId: string, state: ErasureState, userId: string | undefined): Promise<void> {
    // Without its user the message was published before a crash that came after the record's deletion.
    if (userId !== undefined) {
      const value: erasureEvents.ErasureCompletedMessage = {
        erasureId,
        userId,
        services: state.participants,
        requestedAt: state.requestedAt,
        completedAt: deps.now(),
      };
      await deps.bus.publish(ERASURE_TOPICS.completed, [{ key: userId, value }]);
    }
    await deps.store.deleteStream(pendingErasureStreamId(erasureId));
    await deps.handle(erasureId, { type: 'CompleteErasure', data: {} });
    deps.logger.info({ erasureId }, 'erasure completed');
  }

  async function onConfirmed(message: erasureEvents.ErasureConfirmedMessage): Promise<void> {
    const { erasureId, userId, service, streamsDeleted, documentsDeleted } = message;
    const { newState } = await deps.handle(erasureId, { type: 'ConfirmParticipant', data: { service, streamsDeleted, documentsDeleted } });
    if (!newState.erasureId || newState.completed || !allConfirmed(newState)) return;
    await complete(erasureId, newState, userId);
  }

  const unknownUser = new Set<string>();

  /**
   * Publishes the request of every erasure pending since `olderThanMs` again, naming only the participants that have
   * not confirmed; completes one whose confirmations were all recorded before a crash. Returns how many it took up.
   */
  async function resume(olderThanMs = 0): Promise<number> {
    let resumed = 0;
    for (const doc of await deps.erasures.find({ status: 'pending', requestedAt: { $lte: deps.now() - olderThanMs } })) {
      const erasureId = doc._id;
      const state = await currentState(erasureAggregate, deps.store, erasureId);
      if (!state.erasureId || state.completed) continue;
      const userId = await pendingUser(erasureId);
      if (allConfirmed(state)) {
        await complete(erasureId, state, userId);
      } else if (userId === undefined) {
        // The coordinator stopped between the record and the user's: the request was never answered, nor published.
        if (!unknownUser.has(erasureId)) deps.logger.warn({ erasureId }, 'pending erasure without its user: it was never accepted');
        unknownUser.add(erasureId);
        continue;
      } else {
        const participants = state.participants.filter((p) => !state.confirmed.includes(p));
        const value: erasureEvents.ErasureRequestedMessage = { erasureId, userId, requestedAt: state.requestedAt, participants };
        await deps.bus.publish(ERASURE_TOPICS.requested, [{ key: userId, value }]);
        deps.logger.info({ erasureId, participants }, 'pending erasure requested again');
      }
      resumed++;
    }
    return resumed;
  }

  return { request, onConfirmed, resume };
}
