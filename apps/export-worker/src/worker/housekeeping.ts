import type { Bus } from '@udp/bus';
import { exportEvents } from '@udp/contracts';
import { type CommandHandler, DomainError } from '@udp/eventsourcing';
import type { Collection } from '@udp/readmodel';
import type { Logger } from '@udp/telemetry';
import type { ExportEvent } from '../domain/aggregate';
import type { ExportCommand, UserExports } from '../domain/decider';
import type { ExportRow } from '../projections/exports';
import { exportRef } from './export-job';
import { type ExportStorage, removeExportFiles } from './storage';

/** Callbacks are retried for about a minute; one without an outcome long after that was interrupted. */
const CALLBACK_GRACE_MS = 10 * 60_000;

export interface SweepDeps {
  rows: Collection<ExportRow>;
  handle: CommandHandler<ExportCommand, ExportEvent, UserExports, string>;
  storage: ExportStorage;
  /** Calls back for a completed export whose callback has no outcome. */
  resumeCallback(row: ExportRow): void;
  now: () => number;
  logger: Logger;
}

/**
 * The sweep: exports past their expiry are deleted with their files, and callbacks an instance stopped in the middle
 * of are made again. Returns how many exports it deleted. A failure leaves the export for the next sweep.
 */
export function exportSweep({ rows, handle, storage, resumeCallback, now, logger }: SweepDeps): () => Promise<number> {
  return async () => {
    for (const row of await rows.find({ callbackPending: true, completedAt: { $lte: now() - CALLBACK_GRACE_MS } })) {
      if (row.status === 'ready' && row.expiresAt > now()) resumeCallback(row);
    }
    let removed = 0;
    for (const row of await rows.find({ expiresAt: { $lte: now() } })) {
      if (row.status === 'deleted') continue;
      try {
        const { newState } = await handle(row.userId, { type: 'DeleteExport', data: { key: row._id, reason: 'expired' } });
        await removeExportFiles(storage, newState, [row._id]);
        removed++;
      } catch (error) {
        if (!(error instanceof DomainError))
          logger.warn({ err: error, export: exportRef(row._id) }, 'expired export not removed; next sweep retries');
      }
    }
    return removed;
  };
}

/**
 * Publishes the request of every pending export again (embedded mode, at start): the in-process bus's messages do not
 * survive the process, while Kafka keeps its own.
 */
export async function requestPendingExportsAgain({
  rows,
  bus,
  logger,
}: {
  rows: Collection<ExportRow>;
  bus: Bus;
  logger: Logger;
}): Promise<void> {
  const pending = await rows.find({ status: 'pending' });
  for (const row of pending) {
    const value: exportEvents.ExportRequestedMessage = {
      key: row._id,
      userId: row.userId,
      fileName: row.fileName,
      requestedAt: row.createdOn,
      ...(row.callbackUrl !== undefined && { callbackUrl: row.callbackUrl }),
    };
    await bus.publish(exportEvents.EXPORT_TOPICS.requested, [{ key: row.userId, value }]);
  }
  if (pending.length) logger.info({ exports: pending.length }, 'pending exports requested again after a restart');
}

/** Runs `work` every `intervalMs` (not keeping the process alive); `stop` waits for a run in progress. */
export function every(intervalMs: number, work: () => Promise<unknown>, onError: (error: unknown) => void) {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = work().catch(onError);
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
