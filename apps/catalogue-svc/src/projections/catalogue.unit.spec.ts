import type { RecordedEvent } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { recordedEvents } from '@udp/test-system';
import { type ItemEvent, itemStreamId } from '../domain/aggregate';
import { qcItem } from '../testing/catalogue';
import { catalogueProjection, itemVersions } from './catalogue';

/** qc_item_versions: given published versions, one document per version with the versions before it; replays change nothing. */
const published = (version: string, at: number): ItemEvent => ({
  type: 'ItemVersionPublished',
  data: { item: qcItem({ Version: version }), publishedAt: at },
});

async function project(events: RecordedEvent[]) {
  const readModels = new MemoryReadModelStore();
  let changes = 0;
  const projection = catalogueProjection(readModels, () => changes++);
  for (const event of events) await projection.apply(event);
  const versions = itemVersions(readModels);
  return { projection, changes: () => changes, all: () => versions.find({ itemId: '0042W' }, { sort: { revision: 1 } }) };
}

const events = recordedEvents(itemStreamId('0042W'), [published('1.0', 10), published('2.0', 20), published('2.1', 30)]);

describe('catalogue projection', () => {
  it('keeps one document per version, listing the versions published up to it, and tells the view of each change', async () => {
    const { all, changes } = await project(events);
    expect(
      (await all()).map(({ _id, version, publishedAt, versionsAtPublication, revision }) => ({
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
    expect((await all())[1].item).toEqual(qcItem({ Version: '2.0' }));
    expect(changes()).toBe(3);
  });

  it('is idempotent: replaying every event, or older ones after newer ones, changes nothing', async () => {
    const { projection, all } = await project(events);
    const before = await all();
    for (const event of [...events, ...[...events].reverse()]) await projection.apply(event);
    expect(await all()).toEqual(before);
  });
});
