import type { QcItemDefinition } from '@udp/contracts';
import { MemoryEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createCatalogueService } from '../app';
import { parseCatalogueData } from './import-catalogue';
import catalogueData from '../../data/items.json';

const DATA = parseCatalogueData(catalogueData);
const store = () => new MemoryEventStore();
let system: TestSystem | null = null;
afterEach(async () => {
  await system?.stop();
  system = null;
});

async function eventsIn(s: MemoryEventStore, streamId: string) {
  return (await s.readStream(streamId)).events.map((e) => `${e.type} ${(e.data.item as QcItemDefinition).Version}`);
}

/** The catalogue service through the gateway, on a given event store (a restart keeps the store). */
async function serve(eventStore: MemoryEventStore, items: QcItemDefinition[]) {
  let imported: Awaited<ReturnType<typeof createCatalogueService>>['imported'] | undefined;
  system = await startTestSystem([
    {
      prefixes: ['/api/v2/items'],
      public: true,
      adapters: { store: eventStore, readModels: new MemoryReadModelStore() },
      create: async (deps) => {
        const service = await createCatalogueService({ ...deps, items, now: () => 1_700_000_000_000 });
        imported = service.imported;
        return service;
      },
    },
  ]);
  return imported!;
}

/** A store on which the catalogue was imported once, by a service now stopped: the state before a restart. */
async function importedOnce() {
  const s = store();
  await serve(s, DATA);
  await system!.stop();
  system = null;
  return s;
}

describe('the import command', () => {
  it('publishes every item version once, as ItemVersionPublished events in streams qc-item-<ID>', async () => {
    await given(store)
      .when((s) => serve(s, DATA))
      .then(async (first, s) => {
        expect(first).toMatchObject({ published: expect.arrayContaining(['0069W@3.0', '0069W@4.0']), refused: [] });
        expect(first.published).toHaveLength(46);
        expect(await eventsIn(s, 'qc-item-0069W')).toEqual(['ItemVersionPublished 3.0', 'ItemVersionPublished 4.0']);
      });
  });

  it('appends nothing when started again on the same data (idempotent across restarts)', async () => {
    await given(importedOnce)
      .when((s) => serve(s, DATA))
      .then(async (again, s) => {
        expect(again).toEqual({ published: [], unchanged: DATA.map((i) => `${i.ID}@${i.Version}`), refused: [] });
        expect(await eventsIn(s, 'qc-item-0001W')).toEqual(['ItemVersionPublished 5.0']);
        // The rebuilt read model serves the same catalogue.
        expect((await system!.http.get('/api/v2/items/0069W')).text).toContain('<qcc:ThisVersion>4.0</qcc:ThisVersion>');
      });
  });

  it('publishes a new version: the item shows it, the older version stays available unchanged', async () => {
    const afd = DATA.find((i) => i.ID === '0001W')!;
    await given(async () => {
      const s = store();
      await serve(s, DATA);
      const before = await system!.http.get('/api/v2/items/0001W/versions/5-0');
      const listBefore = await system!.http.get('/api/v2/items');
      await system!.stop();
      return { s, before, listBefore };
    })
      .when(({ s }) => serve(s, [...DATA, { ...afd, Version: '5.1', Remarks: 'Clarified.' }]))
      .then(async (next, { before, listBefore }) => {
        expect(next.published).toEqual(['0001W@5.1']);
        const latest = await system!.http.get('/api/v2/items/0001W');
        expect(latest.text).toContain('<qcc:ThisVersion>5.1</qcc:ThisVersion>');
        expect(latest.text).toContain('<qcc:Version>5.0</qcc:Version>\n    <qcc:Version>5.1</qcc:Version>');
        const old = await system!.http.get('/api/v2/items/0001W/versions/5-0');
        expect(old.text).toBe(before.text);
        expect(old.headers.etag).toBe(before.headers.etag);
        expect((await system!.http.get('/api/v2/items')).headers.etag).not.toBe(listBefore.headers.etag);
      });
  });

  it('refuses what the schema or the catalogue rules reject, and what would change a published version', async () => {
    const base = DATA.find((i) => i.ID === '0042W')!;
    await given(importedOnce)
      .when((s) =>
        serve(s, [
          { ...base, Remarks: 'changed after publication' },
          { ...base, Version: '5.0', Definition: 'a control character \u0001 is not XML' },
          { ...base, Version: '6.0', OutputParameters: [] },
        ]),
      )
      .then(async (result, s) => {
        expect(result.published).toEqual([]);
        expect(result.refused).toEqual([
          { item: '0042W@4.0', reason: expect.stringMatching(/published with other content/) },
          { item: '0042W@6.0', reason: expect.stringMatching(/no CheckResult output/) },
          { item: '0042W@5.0', reason: expect.stringMatching(/not valid against the catalogue schema/) },
        ]);
        expect(await eventsIn(s, 'qc-item-0042W')).toEqual(['ItemVersionPublished 4.0']);
      });
  });
});
