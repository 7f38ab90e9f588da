import { createHash, randomUUID } from 'node:crypto';
import type { Bus } from '@udp/bus';
import { erasureEvents } from '@udp/contracts';
import { type Projector, handleCommand, handleCommandVisibly, type WriteSide } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import type { Collection } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import { exportsDecider } from '../domain/decider';
import { type ErasureCommand, allConfirmed, erasureDecider } from '../domain/erasure-decider';
import { type ExportEvent, erasureStreamId, exportStreamId } from '../domain/events';
import type { ExportDocument } from '../projections/exports';
import type { ExportStorage } from './storage';

const { ERASURE_TOPICS } = erasureEvents;
export const PARTICIPANT = 'export-worker';

/** The erasure record names its user only through this hash, so it keeps no user id after the erasure. */
export const userHash = (erasureId: string, userId: string) => createHash('sha256').update(`${erasureId}\u0000${userId}`).digest('hex');

export interface CoordinatorDeps {
  store: EventStore;
  write: WriteSide;
  projector: Pick<Projector, 'waitFor'>;
  bus: Bus;
  participants: string[];
  timeoutMs: number;
  now: () => number;
  logger: Logger;
}

/**
 * `DELETE /api/data`: records the erasure on its own stream, publishes `requested`, and waits (bounded) until
 * every participant confirmed. Confirmations are recorded by whichever instance receives them; the last one
 * publishes `completed` and then records it (a crash in between publishes again: at least once).
 */
export function erasureCoordinator(deps: CoordinatorDeps) {
  const run = (erasureId: string, command: Omit<ErasureCommand, 'metadata'>) =>
    handleCommand(deps.store, erasureStreamId(erasureId), erasureDecider, { ...command, metadata: { now: deps.now() } } as ErasureCommand, {
      retries: 20,
    });

  async function request(userId: string): Promise<{ erasureId: string; completed: boolean }> {
    const erasureId = randomUUID();
    const streamId = erasureStreamId(erasureId);
    const command = {
      type: 'RequestErasure',
      data: { erasureId, userHash: userHash(erasureId, userId), participants: deps.participants },
      metadata: { now: deps.now() },
    } as const;
    const recorded = await handleCommandVisibly(deps.write, streamId, erasureDecider, command, { retries: 0 });
    const requestedAt = (recorded.events[0].data as { requestedAt: number }).requestedAt;
    const message: erasureEvents.ErasureRequestedMessage = { erasureId, userId, requestedAt };
    await deps.bus.publish(ERASURE_TOPICS.requested, [{ key: userId, value: message }]);
    // Requested is revision 0, each participant confirms once, completed comes last.
    const completed = await deps.projector.waitFor(streamId, deps.participants.length + 1, deps.timeoutMs);
    return { erasureId, completed };
  }

  async function onConfirmed(message: erasureEvents.ErasureConfirmedMessage): Promise<void> {
    const { erasureId, userId, service, streamsDeleted, documentsDeleted } = message;
    const confirmed = await run(erasureId, { type: 'ConfirmParticipant', data: { service, streamsDeleted, documentsDeleted } });
    const state = confirmed.events.reduce(erasureDecider.evolve, confirmed.stateBefore);
    if (!state.erasureId || state.completed || !allConfirmed(state)) return;
    const requested = await deps.store.readStream(erasureStreamId(erasureId));
    const requestedAt = (requested.events[0]?.data as { requestedAt?: number } | undefined)?.requestedAt ?? 0;
    const completedAt = deps.now();
    const value: erasureEvents.ErasureCompletedMessage = { erasureId, userId, services: state.participants, requestedAt, completedAt };
    await deps.bus.publish(ERASURE_TOPICS.completed, [{ key: userId, value }]);
    await run(erasureId, { type: 'CompleteErasure', data: {} });
    deps.logger.info({ erasureId }, 'erasure completed');
  }

  return { request, onConfirmed };
}

export interface ParticipantDeps {
  store: EventStore;
  projector: Pick<Projector, 'waitFor'>;
  docs: Collection<ExportDocument>;
  storage: ExportStorage;
  bus: Bus;
  now: () => number;
  logger: Logger;
}

/** The export-worker's own part of an erasure: the user's zips, export stream and statuses, then `confirmed`. */
export function erasureParticipant(deps: ParticipantDeps) {
  return async function onRequested(message: erasureEvents.ErasureRequestedMessage): Promise<void> {
    const { erasureId, userId } = message;
    const streamId = exportStreamId(userId);
    const stream = await deps.store.readStream(streamId);
    const events = stream.events.map((e) => ({ type: e.type, data: e.data }) as ExportEvent);
    const state = events.reduce(exportsDecider.evolve, exportsDecider.initialState());
    for (const record of state.exports.values()) for (const id of record.attempts) await deps.storage.remove(id);
    let streamsDeleted = 0;
    if (stream.revision >= 0) {
      // Let the statuses show every event first, so none is projected again after the documents are gone.
      await deps.projector.waitFor(streamId, stream.revision, 5000);
      await deps.store.deleteStream(streamId);
      streamsDeleted = 1;
    }
    const documentsDeleted = await deps.docs.deleteMany({ userId });
    const value: erasureEvents.ErasureConfirmedMessage = {
      erasureId,
      userId,
      service: PARTICIPANT,
      streamsDeleted,
      documentsDeleted,
      confirmedAt: deps.now(),
    };
    await deps.bus.publish(ERASURE_TOPICS.confirmed, [{ key: userId, value }]);
  };
}
