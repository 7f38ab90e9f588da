import { DomainError } from '@udp/eventsourcing';
import { DeciderSpecification } from '@udp/test-kit';
import { type ExportCommand, exportsDecider } from './decider';
import type { ExportEvent } from './aggregate';
import { sanitiseFileName } from './file-name';

const spec = DeciderSpecification(exportsDecider);
const now = 10_000;
const at = (command: Omit<ExportCommand, 'metadata'>, time = now) => ({ ...command, metadata: { now: time } }) as ExportCommand;
const requested = (key: string, expiresAt = 100_000): ExportEvent => ({
  type: 'ExportRequested',
  data: { key, fileName: 'f.zip', requestedAt: 1, expiresAt },
});
const attempt = (key: string, storageId: string): ExportEvent => ({ type: 'ExportAttemptStarted', data: { key, storageId, startedAt: 2 } });
const refusedAs = (kind: DomainError['kind']) => (e: unknown) => e instanceof DomainError && e.kind === kind;

describe('export decider', () => {
  describe('when nothing was requested', () => {
    it('records a request with its expiry', () =>
      spec
        .given([])
        .when(at({ type: 'RequestExport', data: { key: 'k', fileName: 'f.zip', ttlMs: 500, maxLive: 2 } }))
        .then([{ type: 'ExportRequested', data: { key: 'k', fileName: 'f.zip', requestedAt: now, expiresAt: now + 500 } }]));
    it('has nothing to build', () =>
      spec
        .given([])
        .when(at({ type: 'StartAttempt', data: { key: 'k', storageId: 's' } }))
        .thenThrows(refusedAs('NotFound')));
  });

  describe('when an export is pending', () => {
    const past = [requested('k'), attempt('k', 's1')];
    it('the same request again changes nothing', () =>
      spec
        .given(past)
        .when(at({ type: 'RequestExport', data: { key: 'k', fileName: 'x', ttlMs: 1, maxLive: 9 } }))
        .thenNothingHappens());
    it('refuses a request beyond the live limit; expired exports do not count', () => {
      spec
        .given([requested('a'), requested('b')])
        .when(at({ type: 'RequestExport', data: { key: 'c', fileName: 'f', ttlMs: 1, maxLive: 2 } }))
        .thenThrows(refusedAs('LimitExceeded'));
      spec
        .given([requested('a'), requested('b', now)])
        .when(at({ type: 'RequestExport', data: { key: 'c', fileName: 'f', ttlMs: 1, maxLive: 2 } }))
        .then([{ type: 'ExportRequested', data: { key: 'c', fileName: 'f', requestedAt: now, expiresAt: now + 1 } }]);
    });
    it('completes with an object of one of its attempts, carrying the expiry', () =>
      spec
        .given(past)
        .when(at({ type: 'CompleteExport', data: { key: 'k', storageId: 's1', size: 5, sha256: 'h' } }))
        .then([
          { type: 'ExportCompleted', data: { key: 'k', storageId: 's1', size: 5, sha256: 'h', expiresAt: 100_000, completedAt: now } },
        ]));
    it('refuses to complete with an object no attempt announced', () =>
      spec
        .given(past)
        .when(at({ type: 'CompleteExport', data: { key: 'k', storageId: 'other', size: 5, sha256: 'h' } }))
        .thenThrows(refusedAs('Conflict')));
    it('fails with a reason', () =>
      spec
        .given(past)
        .when(at({ type: 'FailExport', data: { key: 'k', reason: 'r' } }))
        .then([{ type: 'ExportFailed', data: { key: 'k', reason: 'r', failedAt: now } }]));
  });

  describe('when an export is ready', () => {
    const past: ExportEvent[] = [
      requested('k'),
      attempt('k', 's1'),
      attempt('k', 's2'),
      {
        type: 'ExportCompleted',
        data: { key: 'k', storageId: 's2', size: 5, sha256: 'h', expiresAt: 100_000, completedAt: 3 },
      },
    ];
    it('a second completion (a redelivered request, a losing attempt) is refused', () =>
      spec
        .given(past)
        .when(at({ type: 'CompleteExport', data: { key: 'k', storageId: 's1', size: 5, sha256: 'h' } }))
        .thenThrows(refusedAs('Conflict')));
    it('no new attempt starts', () =>
      spec
        .given(past)
        .when(at({ type: 'StartAttempt', data: { key: 'k', storageId: 's3' } }))
        .thenThrows(refusedAs('Conflict')));
    it('deletes it once; then it is unknown', () => {
      spec
        .given(past)
        .when(at({ type: 'DeleteExport', data: { key: 'k', reason: 'deleted' } }))
        .then([{ type: 'ExportDeleted', data: { key: 'k', reason: 'deleted', at: now } }]);
      spec
        .given([...past, { type: 'ExportDeleted', data: { key: 'k', reason: 'expired', at: 4 } }])
        .when(at({ type: 'DeleteExport', data: { key: 'k', reason: 'deleted' } }))
        .thenThrows(refusedAs('NotFound'));
    });
    it('delete-all deletes every export not deleted yet', () =>
      spec
        .given([...past, requested('m'), requested('n'), { type: 'ExportDeleted', data: { key: 'n', reason: 'deleted', at: 4 } }])
        .when(at({ type: 'DeleteAllExports', data: {} }))
        .then([
          { type: 'ExportDeleted', data: { key: 'k', reason: 'deleted', at: now } },
          { type: 'ExportDeleted', data: { key: 'm', reason: 'deleted', at: now } },
        ]));
    it('records the callback outcome', () =>
      spec
        .given(past)
        .when(at({ type: 'RecordCallback', data: { key: 'k', delivered: false, attempts: 3, error: 'e' } }))
        .then([{ type: 'ExportCallbackAttempted', data: { key: 'k', delivered: false, attempts: 3, error: 'e', at: now } }]));
  });
});

describe('sanitiseFileName', () => {
  it.each([
    ['report', 'report.zip'],
    ['report.ZIP', 'report.ZIP'],
    ['../../etc/passwd', 'passwd.zip'],
    ['C:\\Users\\x\\data.zip', 'data.zip'],
    ['a\u0000b\nc\u007fd.zip', 'abcd.zip'],
    ['  "quoted"  name ', 'quoted name.zip'],
    ['.hidden', 'hidden.zip'],
    ['Données été', 'Données été.zip'],
  ])('%j -> %j', (given, expected) => expect(sanitiseFileName(given)).toBe(expected));
  it('gives nothing for a name with nothing usable, and bounds the length', () => {
    for (const name of ['', '/', '../..', '\u0001\u0002', 'a/']) expect(sanitiseFileName(name)).toBeNull();
    expect(sanitiseFileName('x'.repeat(500))!.length).toBe(200);
  });
  it('removes bidirectional controls, so a name cannot show another extension than it has', () => {
    // "invoice\u202Egpj.exe.zip" shows as "invoicepiz.exe.jpg" (the override reverses what follows it).
    expect(sanitiseFileName('invoice\u202Egpj.exe')).toBe('invoicegpj.exe.zip');
    const controls = '\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069';
    expect(sanitiseFileName(`a${controls}b`)).toBe('ab.zip');
    expect(sanitiseFileName(controls)).toBeNull();
    expect(sanitiseFileName('\u05e9\u05dc\u05d5\u05dd')).toBe('\u05e9\u05dc\u05d5\u05dd.zip');
  });
});
