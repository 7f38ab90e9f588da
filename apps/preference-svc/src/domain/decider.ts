import { type Command, type Decider, foldByEvolve, notFound, quotaExceeded } from '@udp/eventsourcing';
import type { PreferenceEvent, PreferenceOperation } from './aggregate';
import {
  type DocumentLimits,
  type JsonObject,
  checkDocument,
  checkKey,
  documentBytes,
  deleteAt,
  deleteJsonPathMatches,
  getAt,
  setAt,
} from './json-document';

/**
 * What the user stores under their other keys (from the read model of keys), for the per-user quotas. Absent:
 * nothing. Two writes of new keys at once may both see the same usage, so a user can pass a quota by the writes
 * in flight at that moment, never by more.
 */
export interface OtherKeysUsage {
  keys: number;
  bytes: number;
}
export type ReplaceDocument = Command<'ReplaceDocument', { key: string; document: JsonObject; usage?: OtherKeysUsage }>;
export type PutAtPath = Command<'PutAtPath', { key: string; path: string[]; value: unknown; usage?: OtherKeysUsage }>;
export type MergeAtPath = Command<'MergeAtPath', { key: string; path: string[]; value: unknown; usage?: OtherKeysUsage }>;
export type DeleteDocument = Command<'DeleteDocument', { key: string }>;
export type DeleteAtPath = Command<'DeleteAtPath', { key: string; path: string[] }>;
export type DeleteMatching = Command<'DeleteMatching', { key: string; jsonpath: string }>;
export type PreferenceCommand = ReplaceDocument | PutAtPath | MergeAtPath | DeleteDocument | DeleteAtPath | DeleteMatching;

/** One preference document: null until it is written, and again once it is deleted. */
export interface PreferenceState {
  document: JsonObject | null;
  /** Whether the latest write made the document (there was none before it): the write answers 201, else 200. */
  createdByLatestWrite: boolean;
}

/** Per-user quotas: keys, and bytes of all documents (PREFERENCE_MAX_KEYS, PREFERENCE_MAX_USER_BYTES). */
export interface PreferenceQuotas {
  maxKeys: number;
  maxUserBytes: number;
}

/**
 * The preference decider, given the configured limits. Path writes are decided on the document as it is
 * now, so a write retried after a concurrent change is re-applied to the new document, not replayed over it.
 */
export function preferenceDecider(limits: DocumentLimits & PreferenceQuotas): Decider<PreferenceCommand, PreferenceEvent, PreferenceState> {
  const written = (
    key: string,
    before: JsonObject | null,
    document: JsonObject,
    operation: PreferenceOperation,
    usage: OtherKeysUsage = { keys: 0, bytes: 0 },
  ): PreferenceEvent[] => {
    checkDocument(document, limits);
    if (!before && usage.keys + 1 > limits.maxKeys) {
      throw quotaExceeded(
        `a user has at most ${limits.maxKeys} preference keys (PREFERENCE_MAX_KEYS); this user has ${usage.keys}`,
        'PREFERENCE_MAX_KEYS',
        limits.maxKeys,
      );
    }
    // Only growth is refused: a user over a lowered quota can still shrink or delete.
    const bytes = documentBytes(document);
    if (usage.bytes + bytes > limits.maxUserBytes && bytes > (before ? documentBytes(before) : 0)) {
      throw quotaExceeded(
        `a user's preferences hold at most ${limits.maxUserBytes} bytes in all (PREFERENCE_MAX_USER_BYTES); ` +
          `the other keys hold ${usage.bytes} and this document would be ${bytes}`,
        'PREFERENCE_MAX_USER_BYTES',
        limits.maxUserBytes,
      );
    }
    // An unchanged document needs no event: a repeated PUT is free and leaves the stream as it was.
    if (before && JSON.stringify(before) === JSON.stringify(document)) return [];
    return [{ type: 'PreferenceWritten', data: { key, document, operation } }];
  };

  function decide(command: PreferenceCommand, { document }: PreferenceState): PreferenceEvent[] {
    checkKey(command.data.key, limits);
    switch (command.type) {
      case 'ReplaceDocument':
        return written(command.data.key, document, command.data.document, { kind: 'replace' }, command.data.usage);
      case 'PutAtPath': {
        const { key, path, value, usage } = command.data;
        return written(key, document, setAt(document, path, value, 'replace'), { kind: 'putPath', path }, usage);
      }
      case 'MergeAtPath': {
        const { key, path, value, usage } = command.data;
        return written(key, document, setAt(document, path, value, 'merge'), { kind: 'mergePath', path }, usage);
      }
      case 'DeleteDocument':
        if (!document) throw notFound(`no preference ${command.data.key}`);
        return [{ type: 'PreferenceDeleted', data: { key: command.data.key } }];
      case 'DeleteAtPath': {
        const { key, path } = command.data;
        if (!document || !getAt(document, path).found) throw notFound(`no preference ${key} with a value at ${path.join('/')}`);
        return written(key, document, deleteAt(document, path), { kind: 'deletePath', path });
      }
      case 'DeleteMatching': {
        const { key, jsonpath } = command.data;
        if (!document) throw notFound(`no preference ${key}`);
        const result = deleteJsonPathMatches(document, jsonpath, limits);
        // `$` matches the document itself: removing it is removing the document.
        if (result.root) return [{ type: 'PreferenceDeleted', data: { key } }];
        if (result.removed === 0) return [];
        return written(key, document, result.document, { kind: 'deleteJsonPath', jsonpath, removed: result.removed });
      }
    }
  }

  return { decide, evolve, initialState, fold: foldByEvolve(evolve) };
}

export function initialState(): PreferenceState {
  return { document: null, createdByLatestWrite: false };
}

export function evolve(state: PreferenceState, event: PreferenceEvent): PreferenceState {
  switch (event.type) {
    case 'PreferenceWritten':
      return { document: event.data.document, createdByLatestWrite: state.document === null };
    case 'PreferenceDeleted':
      return { document: null, createdByLatestWrite: false };
  }
}
