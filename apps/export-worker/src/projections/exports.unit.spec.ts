import { ForeignEventError } from '@udp/eventsourcing';
import { projectionSpecification } from '@udp/test-system';
import { type ErasureEvent, type ExportEvent, erasureStreams, exportStreams } from '../domain/aggregate';
import { erasuresProjection } from './erasures';
import { EXPORTS_COLLECTION, exportsProjection } from './exports';

/** exports and erasures: given events, the rows the routes and the sweep read; a replayed event changes nothing. */
const exportsSpec = projectionSpecification(exportsProjection);
const erasuresSpec = projectionSpecification(erasuresProjection);

const KEY = 'k'.repeat(22);
const requested: ExportEvent = {
  type: 'ExportRequested',
  data: { key: KEY, fileName: 'mine.zip', callbackUrl: 'https://example.org/cb', requestedAt: 1, expiresAt: 100 },
};
const lifetime: ExportEvent[] = [
  requested,
  { type: 'ExportAttemptStarted', data: { key: KEY, storageId: 's1', startedAt: 2 } },
  { type: 'ExportCompleted', data: { key: KEY, storageId: 's1', size: 10, sha256: 'f'.repeat(64), expiresAt: 100, completedAt: 3 } },
  { type: 'ExportCallbackAttempted', data: { key: KEY, delivered: true, attempts: 1, at: 4 } },
];

describe('exports projection', () => {
  it('keeps one row per export: ready with its file, the callback delivered', () =>
    exportsSpec.given(exportStreams.streamOf('ann'), lifetime).then(EXPORTS_COLLECTION, [
      {
        _id: KEY,
        userId: 'ann',
        fileName: 'mine.zip',
        callbackUrl: 'https://example.org/cb',
        status: 'ready',
        createdOn: 1,
        expiresAt: 100,
        size: 10,
        sha256: 'f'.repeat(64),
        storageId: 's1',
        completedAt: 3,
        callback: { status: 'delivered', attempts: 1 },
        callbackPending: false,
        revision: 3,
      },
    ]));

  it('changes nothing of an export from the stream of another user that names its key', () =>
    exportsSpec
      .given(exportStreams.streamOf('ann'), [requested])
      .and(exportStreams.streamOf('bob'), [{ type: 'ExportDeleted', data: { key: KEY, reason: 'deleted', at: 5 } }])
      .then(EXPORTS_COLLECTION, (rows) => expect(rows).toMatchObject([{ _id: KEY, userId: 'ann', status: 'pending' }])));

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', () =>
    exportsSpec.given(exportStreams.streamOf('ann'), lifetime).thenReplayingChangesNothing());

  it("refuses an event of another owner in a user's stream", () =>
    exportsSpec.given({ id: exportStreams.streamOf('ann').id, owner: { userId: 'bob' } }, [requested]).thenRefuses(ForeignEventError));
});

describe('erasures projection', () => {
  const erasure: ErasureEvent[] = [
    { type: 'ErasureRequested', data: { erasureId: 'e1', userHash: 'h', participants: ['a', 'b'], requestedAt: 1 } },
    { type: 'ErasureParticipantConfirmed', data: { service: 'a', streamsDeleted: 1, documentsDeleted: 2, confirmedAt: 2 } },
    { type: 'ErasureParticipantConfirmed', data: { service: 'b', streamsDeleted: 0, documentsDeleted: 0, confirmedAt: 3 } },
    { type: 'ErasureCompleted', data: { completedAt: 4 } },
  ];

  it('keeps one row per erasure: its participants, who confirmed, and when it completed', () =>
    erasuresSpec.given(erasureStreams.streamOf('e1'), erasure).then('erasures', [
      {
        _id: 'e1',
        userHash: 'h',
        participants: ['a', 'b'],
        confirmed: ['a', 'b'],
        status: 'completed',
        requestedAt: 1,
        completedAt: 4,
        revision: 3,
      },
    ]));

  it('is idempotent: a confirmation delivered again is not counted twice', () =>
    erasuresSpec.given(erasureStreams.streamOf('e1'), erasure).thenReplayingChangesNothing());
});
