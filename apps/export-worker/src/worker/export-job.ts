import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { exportEvents } from '@udp/contracts';
import { type CommandHandler, DomainError } from '@udp/eventsourcing';
import type { Logger } from '@udp/telemetry';
import type { Export, ExportCommand, UserExports } from '../domain/decider';
import type { ExportEvent } from '../domain/aggregate';
import { type ExportAddresses, type ExportRow, exportStatus } from '../projections/exports';
import { type CallbackOptions, deliverCallback } from './callback';
import { SourceError } from './sources';
import type { ExportStorage } from './storage';
import { buildZip, type ExportArea } from './zip';

export interface ExportJobDeps {
  /** The exports aggregate's command handler: a completion is announced (callback) only once the statuses show it. */
  handle: CommandHandler<ExportCommand, ExportEvent, UserExports, string>;
  storage: ExportStorage;
  /** The areas of one user's export (HTTP sources in production); `signal` aborts their reads (erasure). */
  areas(userId: string, requestId: string, signal: AbortSignal): ExportArea[];
  addresses: ExportAddresses;
  callback: CallbackOptions & { attempts: number; retryDelayMs: number };
  logger: Logger;
  now: () => number;
  /** Tries to build one export before it is recorded as failed (a service may be briefly away). */
  buildAttempts?: number;
  buildRetryDelayMs?: number;
}

/** How logs name an export: the key is a capability (anyone holding it can download), so never the key itself. */
export const exportRef = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** A command the export's state refuses (deleted, already completed...): the message needs nothing more. */
const refused = (error: unknown) => error instanceof DomainError;

/**
 * Handles `userdata.export.requested`, delivered at least once, to any instance. Exactly one zip per export:
 * each attempt is recorded (with its storage object) before it writes, the completion is appended with the
 * expected revision, and only a pending export can complete. A redelivered request for an export that is ready
 * changes nothing; an attempt that was killed half-way is removed by the next one; a losing concurrent attempt
 * removes its own object. An erasure of the user cancels the exports in flight (`cancel`): they stop reading, remove
 * their object and record nothing.
 */
export function exportJob(deps: ExportJobDeps) {
  const callbacks = new Set<Promise<void>>();
  /** Builds in flight on this instance, by user: what an erasure cancels. */
  const running = new Map<string, Set<{ controller: AbortController; done: Promise<void> }>>();

  async function handle(message: exportEvents.ExportRequestedMessage, requestId: string): Promise<void> {
    const controller = new AbortController();
    let finished!: () => void;
    const entry = { controller, done: new Promise<void>((resolve) => (finished = resolve)) };
    const ofUser = running.get(message.userId) ?? new Set();
    running.set(message.userId, ofUser.add(entry));
    try {
      await build(message, requestId, controller.signal);
    } finally {
      ofUser.delete(entry);
      if (!ofUser.size && running.get(message.userId) === ofUser) running.delete(message.userId);
      finished();
    }
  }

  /** Stops the user's builds in flight on this instance and waits until they have removed their objects. */
  async function cancel(userId: string): Promise<number> {
    const entries = [...(running.get(userId) ?? [])];
    for (const { controller } of entries) controller.abort();
    await Promise.all(entries.map((e) => e.done));
    return entries.length;
  }

  async function build(message: exportEvents.ExportRequestedMessage, requestId: string, signal: AbortSignal): Promise<void> {
    const { key, userId } = message;
    const storageId = deps.storage.newId();
    let started;
    try {
      started = await deps.handle(userId, { type: 'StartAttempt', data: { key, storageId } });
    } catch (error) {
      if (refused(error)) return;
      throw error;
    }
    // Earlier attempts were killed or lost a race: their objects (whole or partial) go.
    for (const old of started.newState.exports.get(key)!.attempts) if (old !== storageId) await deps.storage.remove(old);
    const cancelled = async () => {
      // The user's data is being erased: the stream goes with it, so nothing is recorded (not even a failure).
      await deps.storage.remove(storageId);
      deps.logger.info({ export: exportRef(key) }, 'export cancelled by an erasure');
    };

    const attempts = deps.buildAttempts ?? 3;
    let built;
    for (let attempt = 1; ; attempt++) {
      try {
        if (signal.aborted) return cancelled();
        built = await buildZip(deps.areas(userId, requestId, signal), { userId, createdAt: deps.now() }, (zip) =>
          deps.storage.write(storageId, zip),
        );
        break;
      } catch (error) {
        await deps.storage.remove(storageId);
        if (signal.aborted) return cancelled();
        deps.logger.warn({ err: error, export: exportRef(key), attempt }, 'export build failed');
        if (attempt >= attempts) {
          const reason = error instanceof SourceError ? error.message : 'the export could not be built';
          await deps.handle(userId, { type: 'FailExport', data: { key, reason } }).catch((e) => {
            if (!refused(e)) throw e;
          });
          return;
        }
        await delay((deps.buildRetryDelayMs ?? 1000) * attempt, undefined, { signal }).catch(() => undefined);
      }
    }
    if (signal.aborted) return cancelled();

    let completed;
    try {
      completed = await deps.handle(userId, { type: 'CompleteExport', data: { key, storageId, size: built.size, sha256: built.sha256 } });
    } catch (error) {
      await deps.storage.remove(storageId);
      if (refused(error)) return;
      throw error;
    }
    const record = completed.newState.exports.get(key)!;
    for (const other of record.attempts) if (other !== storageId) await deps.storage.remove(other);
    deps.logger.info({ export: exportRef(key), size: built.size }, 'export ready');
    if (record.callbackUrl) startCallback(userId, record, built);
  }

  const inFlight = new Set<string>();

  function startCallback(
    userId: string,
    record: Pick<Export, 'key' | 'fileName' | 'callbackUrl' | 'requestedAt' | 'expiresAt'>,
    built: { size: number; sha256: string },
  ): void {
    if (inFlight.has(record.key)) return;
    inFlight.add(record.key);
    const { key, fileName, requestedAt: createdOn, expiresAt } = record;
    const status = exportStatus({ key, fileName, status: 'ready', createdOn, expiresAt, ...built }, deps.addresses);
    const body = JSON.stringify(status);
    // The download never waits for the callback: it runs on its own and its outcome is recorded.
    const task = deliverCallback(record.callbackUrl!, body, deps.callback)
      .then(async (outcome) => {
        if (!outcome.delivered)
          deps.logger.warn({ export: exportRef(record.key), attempts: outcome.attempts, error: outcome.error }, 'export callback failed');
        await deps.handle(userId, { type: 'RecordCallback', data: { key: record.key, ...outcome } });
      })
      .catch((error) => deps.logger.error({ err: error, export: exportRef(record.key) }, 'could not record the callback outcome'))
      .finally(() => {
        callbacks.delete(task);
        inFlight.delete(record.key);
      });
    callbacks.add(task);
  }

  /** A completed export whose callback never got an outcome (the instance stopped meanwhile): call back now. */
  function resumeCallback(doc: ExportRow): void {
    if (!doc.callbackUrl || doc.size === undefined || doc.sha256 === undefined) return;
    deps.logger.info({ export: exportRef(doc._id) }, 'resuming an export callback');
    startCallback(
      doc.userId,
      { key: doc._id, fileName: doc.fileName, callbackUrl: doc.callbackUrl, requestedAt: doc.createdOn, expiresAt: doc.expiresAt },
      { size: doc.size, sha256: doc.sha256 },
    );
  }

  return {
    handle,
    cancel,
    resumeCallback,
    /** Waits for callbacks still running (shutdown, tests). */
    async drain(): Promise<void> {
      await Promise.all([...callbacks]);
    },
  };
}
