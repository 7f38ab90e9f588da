import { type Command, type Decider, conflict, foldByEvolve, limitExceeded, notFound } from '@udp/eventsourcing';
import type { ExportEvent } from './aggregate';

/** Where an export is in its life. */
export type ExportPhase = 'pending' | 'ready' | 'failed' | 'deleted';

/** An export as the decider knows it (the read model's row is `ExportRow`, the API's answer `ExportStatus`). */
export interface Export {
  key: string;
  fileName: string;
  callbackUrl?: string;
  requestedAt: number;
  expiresAt: number;
  status: ExportPhase;
  /** Storage objects of every attempt, in order; the completed one is `storageId`. */
  attempts: string[];
  storageId?: string;
}

/** The aggregate's state: the user's exports by key. */
export interface UserExports {
  exports: ReadonlyMap<string, Export>;
}

export type RequestExport = Command<
  'RequestExport',
  { key: string; fileName: string; callbackUrl?: string; ttlMs: number; maxLive: number }
>;
export type StartAttempt = Command<'StartAttempt', { key: string; storageId: string }>;
export type CompleteExport = Command<'CompleteExport', { key: string; storageId: string; size: number; sha256: string }>;
export type FailExport = Command<'FailExport', { key: string; reason: string }>;
export type RecordCallback = Command<'RecordCallback', { key: string; delivered: boolean; attempts: number; error?: string }>;
export type DeleteExport = Command<'DeleteExport', { key: string; reason: 'deleted' | 'expired' }>;
export type DeleteAllExports = Command<'DeleteAllExports', Record<string, never>>;
export type ExportCommand = RequestExport | StartAttempt | CompleteExport | FailExport | RecordCallback | DeleteExport | DeleteAllExports;

const live = (record: Export | undefined, now: number): record is Export =>
  record !== undefined && record.status !== 'deleted' && record.expiresAt > now;

function pending(state: UserExports, key: string): Export {
  const record = state.exports.get(key);
  if (!record) throw notFound(`no export ${key}`);
  if (record.status !== 'pending') throw conflict(`export ${key} is ${record.status}, not pending`);
  return record;
}

export function decide(command: ExportCommand, state: UserExports): ExportEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'RequestExport': {
      const { key, fileName, callbackUrl, ttlMs, maxLive } = command.data;
      if (state.exports.has(key)) return [];
      const liveCount = [...state.exports.values()].filter((r) => live(r, now)).length;
      if (liveCount >= maxLive) throw limitExceeded(`at most ${maxLive} exports at a time; delete one first`);
      return [
        {
          type: 'ExportRequested',
          data: { key, fileName, ...(callbackUrl !== undefined && { callbackUrl }), requestedAt: now, expiresAt: now + ttlMs },
        },
      ];
    }
    case 'StartAttempt':
      pending(state, command.data.key);
      return [{ type: 'ExportAttemptStarted', data: { key: command.data.key, storageId: command.data.storageId, startedAt: now } }];
    case 'CompleteExport': {
      const record = pending(state, command.data.key);
      if (!record.attempts.includes(command.data.storageId))
        throw conflict(`storage object ${command.data.storageId} is no attempt of export ${record.key}`);
      const { key, storageId, size, sha256 } = command.data;
      return [{ type: 'ExportCompleted', data: { key, storageId, size, sha256, expiresAt: record.expiresAt, completedAt: now } }];
    }
    case 'FailExport':
      pending(state, command.data.key);
      return [{ type: 'ExportFailed', data: { key: command.data.key, reason: command.data.reason, failedAt: now } }];
    case 'RecordCallback': {
      const record = state.exports.get(command.data.key);
      if (!record || record.status === 'deleted') return [];
      return [{ type: 'ExportCallbackAttempted', data: { ...command.data, at: now } }];
    }
    case 'DeleteExport': {
      const record = state.exports.get(command.data.key);
      if (!record || record.status === 'deleted') throw notFound(`no export ${command.data.key}`);
      return [{ type: 'ExportDeleted', data: { key: record.key, reason: command.data.reason, at: now } }];
    }
    case 'DeleteAllExports':
      return [...state.exports.values()]
        .filter((r) => r.status !== 'deleted')
        .map((r) => ({ type: 'ExportDeleted', data: { key: r.key, reason: 'deleted', at: now } }) as const);
  }
}

export function evolve(state: UserExports, event: ExportEvent): UserExports {
  const exports = new Map(state.exports);
  const update = (key: string, change: Partial<Export>) => {
    const record = exports.get(key);
    if (record) exports.set(key, { ...record, ...change });
  };
  switch (event.type) {
    case 'ExportRequested':
      exports.set(event.data.key, { ...event.data, status: 'pending', attempts: [] });
      break;
    case 'ExportAttemptStarted':
      update(event.data.key, { attempts: [...(exports.get(event.data.key)?.attempts ?? []), event.data.storageId] });
      break;
    case 'ExportCompleted':
      update(event.data.key, { status: 'ready', storageId: event.data.storageId });
      break;
    case 'ExportFailed':
      update(event.data.key, { status: 'failed' });
      break;
    case 'ExportCallbackAttempted':
      break;
    case 'ExportDeleted':
      update(event.data.key, { status: 'deleted' });
      break;
  }
  return { exports };
}

export const exportsDecider: Decider<ExportCommand, ExportEvent, UserExports> = {
  decide,
  evolve,
  initialState: () => ({ exports: new Map() }),
  // evolve copies the map, so folding by it never changes the state it starts from.
  fold: foldByEvolve(evolve),
};
