import { DomainError } from '@udp/eventsourcing';
import { DeciderSpecification } from '@udp/test-kit';
import { type PreferenceCommand, preferenceDecider } from './decider';
import type { PreferenceEvent } from './aggregate';

const limits = {
  maxDocumentBytes: 200,
  maxKeyLength: 10,
  maxPathDepth: 4,
  maxJsonPathSteps: 10_000,
  maxJsonPathResultBytes: 10_000,
};
const spec = DeciderSpecification(preferenceDecider(limits));
const at = (command: Omit<PreferenceCommand, 'metadata'>) => ({ ...command, metadata: { now: 1_700_000_000_000 } }) as PreferenceCommand;
const written = (
  document: Record<string, unknown>,
  operation: Extract<PreferenceEvent, { type: 'PreferenceWritten' }>['data']['operation'],
  key = 'k',
): PreferenceEvent => ({
  type: 'PreferenceWritten',
  data: { key, document, operation },
});
const deleted = (key = 'k'): PreferenceEvent => ({ type: 'PreferenceDeleted', data: { key } });
const failsWith = (kind: DomainError['kind'], field?: string) => (error: unknown) =>
  error instanceof DomainError && error.kind === kind && (field === undefined || error.field === field);

describe('preference decider', () => {
  describe('when the document does not exist', () => {
    it('creates it on a PUT of a whole document', () =>
      spec
        .given([])
        .when(at({ type: 'ReplaceDocument', data: { key: 'k', document: { theme: 'dark' } } }))
        .then([written({ theme: 'dark' }, { kind: 'replace' })]));

    it('creates it and every missing parent on a write to a path', () =>
      spec
        .given([])
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['favorites', 'urn:show:1', 'date'], value: 5 } }))
        .then([written({ favorites: { 'urn:show:1': { date: 5 } } }, { kind: 'putPath', path: ['favorites', 'urn:show:1', 'date'] })]));

    it('refuses to delete it, a path in it, or JSONPath matches in it', () => {
      spec
        .given([])
        .when(at({ type: 'DeleteDocument', data: { key: 'k' } }))
        .thenThrows(failsWith('NotFound'));
      spec
        .given([])
        .when(at({ type: 'DeleteAtPath', data: { key: 'k', path: ['a'] } }))
        .thenThrows(failsWith('NotFound'));
      spec
        .given([])
        .when(at({ type: 'DeleteMatching', data: { key: 'k', jsonpath: '$.a' } }))
        .thenThrows(failsWith('NotFound'));
    });

    it('refuses an empty key and a key past the limit', () => {
      spec
        .given([])
        .when(at({ type: 'ReplaceDocument', data: { key: '', document: {} } }))
        .thenThrows(failsWith('Invalid', 'key'));
      spec
        .given([])
        .when(at({ type: 'ReplaceDocument', data: { key: 'x'.repeat(11), document: {} } }))
        .thenThrows(failsWith('LimitExceeded', 'key'));
    });

    it('refuses a document larger than the limit (nothing is written)', () =>
      spec
        .given([])
        .when(at({ type: 'ReplaceDocument', data: { key: 'k', document: { big: 'x'.repeat(300) } } }))
        .thenThrows(failsWith('TooLarge')));

    it('refuses a document nested deeper than the limit', () =>
      spec
        .given([])
        .when(at({ type: 'ReplaceDocument', data: { key: 'k', document: { a: { b: { c: { d: { e: 1 } } } } } } }))
        .thenThrows(failsWith('LimitExceeded', 'body')));
  });

  describe('when the document exists', () => {
    const past = [written({ theme: 'dark', favorites: { a: { date: 1 } }, list: [1, 2, 3] }, { kind: 'replace' })];

    it('replaces it whole', () =>
      spec
        .given(past)
        .when(at({ type: 'ReplaceDocument', data: { key: 'k', document: { theme: 'light' } } }))
        .then([written({ theme: 'light' }, { kind: 'replace' })]));

    it('changes nothing when the same document is PUT again', () =>
      spec
        .given(past)
        .when(
          at({ type: 'ReplaceDocument', data: { key: 'k', document: { theme: 'dark', favorites: { a: { date: 1 } }, list: [1, 2, 3] } } }),
        )
        .thenNothingHappens());

    it('replaces the part under a path, keeping the rest', () =>
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['favorites', 'b'], value: { date: 2 } } }))
        .then([
          written(
            { theme: 'dark', favorites: { a: { date: 1 }, b: { date: 2 } }, list: [1, 2, 3] },
            { kind: 'putPath', path: ['favorites', 'b'] },
          ),
        ]));

    it('merges objects on a partial update, and replaces anything else', () => {
      spec
        .given(past)
        .when(at({ type: 'MergeAtPath', data: { key: 'k', path: ['favorites'], value: { b: { date: 2 } } } }))
        .then([
          written(
            { theme: 'dark', favorites: { a: { date: 1 }, b: { date: 2 } }, list: [1, 2, 3] },
            { kind: 'mergePath', path: ['favorites'] },
          ),
        ]);
      spec
        .given(past)
        .when(at({ type: 'MergeAtPath', data: { key: 'k', path: ['list'], value: [9] } }))
        .then([written({ theme: 'dark', favorites: { a: { date: 1 } }, list: [9] }, { kind: 'mergePath', path: ['list'] })]);
    });

    it('writes array elements by index and appends at the length', () => {
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['list', '1'], value: 'two' } }))
        .then([written({ theme: 'dark', favorites: { a: { date: 1 } }, list: [1, 'two', 3] }, { kind: 'putPath', path: ['list', '1'] })]);
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['list', '3'], value: 4 } }))
        .then([written({ theme: 'dark', favorites: { a: { date: 1 } }, list: [1, 2, 3, 4] }, { kind: 'putPath', path: ['list', '3'] })]);
    });

    it('refuses an index out of range, a name in an array, and a path through a scalar', () => {
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['list', '7'], value: 1 } }))
        .thenThrows(failsWith('Invalid', 'path'));
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['list', 'x'], value: 1 } }))
        .thenThrows(failsWith('Invalid', 'path'));
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['theme', 'colour'], value: 1 } }))
        .thenThrows(failsWith('Invalid', 'path'));
    });

    it('refuses a write that would make the document too large', () =>
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['big'], value: 'x'.repeat(300) } }))
        .thenThrows(failsWith('TooLarge')));

    it('deletes it', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteDocument', data: { key: 'k' } }))
        .then([deleted()]));

    it('deletes the part under a path; an array element is removed, not nulled', () => {
      spec
        .given(past)
        .when(at({ type: 'DeleteAtPath', data: { key: 'k', path: ['favorites', 'a'] } }))
        .then([written({ theme: 'dark', favorites: {}, list: [1, 2, 3] }, { kind: 'deletePath', path: ['favorites', 'a'] })]);
      spec
        .given(past)
        .when(at({ type: 'DeleteAtPath', data: { key: 'k', path: ['list', '0'] } }))
        .then([written({ theme: 'dark', favorites: { a: { date: 1 } }, list: [2, 3] }, { kind: 'deletePath', path: ['list', '0'] })]);
    });

    it('refuses to delete at a path where nothing is', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteAtPath', data: { key: 'k', path: ['favorites', 'zz'] } }))
        .thenThrows(failsWith('NotFound')));

    it('deletes every JSONPath match, array elements from the end', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteMatching', data: { key: 'k', jsonpath: '$.list[0,2]' } }))
        .then([
          written(
            { theme: 'dark', favorites: { a: { date: 1 } }, list: [2] },
            { kind: 'deleteJsonPath', jsonpath: '$.list[0,2]', removed: 2 },
          ),
        ]));

    it('deletes nested matches found by a deep scan', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteMatching', data: { key: 'k', jsonpath: '$..date' } }))
        .then([
          written({ theme: 'dark', favorites: { a: {} }, list: [1, 2, 3] }, { kind: 'deleteJsonPath', jsonpath: '$..date', removed: 1 }),
        ]));

    it('changes nothing when the JSONPath matches nothing', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteMatching', data: { key: 'k', jsonpath: '$.nothing' } }))
        .thenNothingHappens());

    it('deletes the document when the JSONPath is the root', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteMatching', data: { key: 'k', jsonpath: '$' } }))
        .then([deleted()]));

    it('refuses a filter expression instead of evaluating it', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteMatching', data: { key: 'k', jsonpath: "$..[?(@.constructor.constructor('return process')().exit())]" } }))
        .thenThrows(failsWith('Invalid', 'jsonpath')));
  });

  describe('when the document was deleted', () => {
    const past = [written({ a: 1 }, { kind: 'replace' }), deleted()];

    it('a write to a path starts a new document', () =>
      spec
        .given(past)
        .when(at({ type: 'PutAtPath', data: { key: 'k', path: ['b'], value: 2 } }))
        .then([written({ b: 2 }, { kind: 'putPath', path: ['b'] })]));

    it('deleting it again is not found', () =>
      spec
        .given(past)
        .when(at({ type: 'DeleteDocument', data: { key: 'k' } }))
        .thenThrows(failsWith('NotFound')));
  });
});
