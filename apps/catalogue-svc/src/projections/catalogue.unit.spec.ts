import { projectionSpecification } from '@udp/test-system';
import { type ItemEvent, itemStreams } from '../domain/aggregate';
import { qcItem } from '../testing/catalogue';
import { ITEM_VERSIONS_COLLECTION, type ItemVersionDocument, catalogueProjection } from './catalogue';

/** qc_item_versions: given published versions, one document per version with the versions before it; replays change nothing. */
const published = (version: string, at: number): ItemEvent => ({
  type: 'ItemVersionPublished',
  data: { item: qcItem({ Version: version }), publishedAt: at },
});

let changes = 0;
const spec = projectionSpecification((readModels) => catalogueProjection(readModels, () => changes++));
const versions = [published('1.0', 10), published('2.0', 20), published('2.1', 30)];

describe('catalogue projection', () => {
  it('keeps one document per version, listing the versions published up to it', () =>
    spec.given(itemStreams.streamOf('0042W'), versions).then(ITEM_VERSIONS_COLLECTION, (documents: ItemVersionDocument[]) => {
      expect(
        documents.map(({ _id, version, publishedAt, versionsAtPublication, revision }) => ({
          _id,
          version,
          publishedAt,
          versionsAtPublication,
          revision,
        })),
      ).toEqual([
        { _id: '0042W@1.0', version: '1.0', publishedAt: 10, versionsAtPublication: ['1.0'], revision: 0 },
        { _id: '0042W@2.0', version: '2.0', publishedAt: 20, versionsAtPublication: ['1.0', '2.0'], revision: 1 },
        { _id: '0042W@2.1', version: '2.1', publishedAt: 30, versionsAtPublication: ['1.0', '2.0', '2.1'], revision: 2 },
      ]);
      expect(documents[1].item).toEqual(qcItem({ Version: '2.0' }));
    }));

  it('tells the view of each change', async () => {
    changes = 0;
    await spec.given(itemStreams.streamOf('0042W'), versions).thenQuery(async () => expect(changes).toBe(3));
  });

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', () =>
    spec.given(itemStreams.streamOf('0042W'), versions).thenReplayingChangesNothing());
});
