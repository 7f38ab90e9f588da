import { type Command, type Decider, foldByEvolve, notFound } from '@udp/eventsourcing';
import type { PreferenceEvent, PreferenceOperation } from './aggregate';
import {
  type DocumentLimits,
  type JsonObject,
  checkDocument,
  checkKey,
  deleteAt,
  deleteJsonPathMatches,
  getAt,
  setAt,
} from './json-document';

export type ReplaceDocument = Command<'ReplaceDocument', { key: string; document: JsonObject }>;
export type PutAtPath = Command<'PutAtPath', { key: string; path: string[]; value: unknown }>;
export type MergeAtPath = Command<'MergeAtPath', { key: string; path: string[]; value: unknown }>;
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

/**
 * Per-user quotas: keys, and bytes of all documents (PREFERENCE_MAX_KEYS, PREFERENCE_MAX_USER_BYTES). A key's stream
 * cannot see the other keys: the quota stream decides them (quota-decider.ts).
 */
export interface PreferenceQuotas {
  maxKeys: number;
  maxUserBytes: number;
}

/**
 * The preference decider, given the configured limits. Path writes are decided on the document as it is
 * now, so a write retried after a concurrent change is re-applied to the new document, not replayed over it.
 */
export function preferenceDecider(limits: DocumentLimits): Decider<PreferenceCommand, PreferenceEvent, PreferenceState> {
  const written = (key: string, before: JsonObject | null, document: JsonObject, operation: PreferenceOperation): PreferenceEvent[] => {
    checkDocument(document, limits);
    // An unchanged document needs no event: a repeated PUT is free and leaves the stream as it was.
    if (before && JSON.stringify(before) === JSON.stringify(document)) return [];
    return [{ type: 'PreferenceWritten', data: { key, document, operation } }];
  };

  function decide(command: PreferenceCommand, { document }: PreferenceState): PreferenceEvent[] {
    checkKey(command.data.key, limits);
    switch (command.type) {
      case 'ReplaceDocument':
        return written(command.data.key, document, command.data.document, { kind: 'replace' });
      case 'PutAtPath': {
        const { key, path, value } = command.data;
        return written(key, document, setAt(document, path, value, 'replace'), { kind: 'putPath', path });
      }
      case 'MergeAtPath': {
        const { key, path, value } = command.data;
        return written(key, document, setAt(document, path, value, 'merge'), { kind: 'mergePath', path });
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
