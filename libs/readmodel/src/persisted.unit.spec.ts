import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PersistedMemoryReadModelStore, READ_MODELS_FORMAT, type PersistedReadModelsOptions } from './persisted';
import { readModelContract } from './readmodel.contract';

interface Entry {
  _id: string;
  userId: string;
  date: number;
  revision: number;
  note?: string | null;
}

const warnings: string[] = [];
const logger = { info: () => undefined, warn: (details: object) => void warnings.push(JSON.stringify(details)) };
const fileIn = () => join(mkdtempSync(join(tmpdir(), 'udp-read-models-')), 'svc', 'read-models.ndjson');
const open = (file: string, head = 10_000n, extra: Partial<PersistedReadModelsOptions> = {}) =>
  PersistedMemoryReadModelStore.open({ file, head: () => head, logger, ...extra });

/** Two users' entries and a projector's checkpoint, as a projection would leave them. */
async function filled(file: string): Promise<PersistedMemoryReadModelStore> {
  const store = await open(file);
  await store.ensureIndex('entries', { userId: 1, date: -1 });
  const entries = store.collection<Entry>('entries');
  for (let i = 0; i < 2500; i++)
    await entries.upsertIfNewer({ _id: `alice/${i}`, userId: 'alice', date: i, revision: i, note: i % 2 ? null : 'x' });
  await entries.upsertIfNewer({ _id: 'bob/1', userId: 'bob', date: 7, revision: 1 });
  await store.collection<Entry>('heads').upsertIfNewer({ _id: 'alice', userId: 'alice', date: 0, revision: 2499 });
  await store.checkpoints().save('entries-projection', 2501n);
  return store;
}

beforeEach(() => void warnings.splice(0));

readModelContract('persisted memory', async () => open(fileIn()));

describe('persisted memory read models', () => {
  it('given a clean stop, when opened again, then every document, index order and checkpoint is back', async () => {
    const file = fileIn();
    await (await filled(file)).close();
    const reopened = await open(file);
    await reopened.ensureIndex('entries', { userId: 1, date: -1 });
    const entries = reopened.collection<Entry>('entries');
    expect(await entries.count({})).toBe(2501);
    expect(await entries.find({ userId: 'alice' }, { sort: { date: -1 }, limit: 2 })).toEqual([
      { _id: 'alice/2499', userId: 'alice', date: 2499, revision: 2499, note: null },
      { _id: 'alice/2498', userId: 'alice', date: 2498, revision: 2498, note: 'x' },
    ]);
    expect(await entries.get('bob/1')).toEqual({ _id: 'bob/1', userId: 'bob', date: 7, revision: 1 });
    expect(await reopened.collection<Entry>('heads').get('alice')).toMatchObject({ revision: 2499 });
    expect(await reopened.checkpoints().load('entries-projection')).toBe(2501n);
    expect(warnings).toEqual([]);
  });

  it('given a file of another version, when opened, then it is ignored with a warning and the store is empty', async () => {
    const file = fileIn();
    await (await filled(file)).close();
    const [, ...rest] = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, [JSON.stringify({ format: READ_MODELS_FORMAT, version: 999, checkpoints: {} }), ...rest].join('\n'));
    const reopened = await open(file);
    expect(await reopened.collection('entries').count({})).toBe(0);
    expect(await reopened.checkpoints().load('entries-projection')).toBeNull();
    expect(warnings.join()).toContain('version 999');
  });

  it.each([
    ['truncated', (text: string) => text.slice(0, Math.floor(text.length / 2))],
    ['cut at a line end', (text: string) => text.split('\n').slice(0, 3).join('\n')],
    ['garbage', () => 'not json\n'],
    ['empty', () => ''],
  ])('given a %s file, when opened, then it is ignored and the store is empty', async (_, damage) => {
    const file = fileIn();
    await (await filled(file)).close();
    writeFileSync(file, damage(readFileSync(file, 'utf8')));
    const reopened = await open(file);
    expect(await reopened.collection('entries').count({})).toBe(0);
    expect(await reopened.checkpoints().load('entries-projection')).toBeNull();
    expect(warnings).toHaveLength(1);
    // Not left behind: it may be what an interrupted erasure was destroying.
    expect(existsSync(file)).toBe(false);
  });

  it('given a checkpoint beyond the event log it is opened on, then the file is ignored (it is not this log)', async () => {
    const file = fileIn();
    await (await filled(file)).close();
    const reopened = await open(file, 2500n);
    expect(await reopened.collection('entries').count({})).toBe(0);
    expect(warnings.join()).toContain('beyond');
  });

  it('when documents are deleted (an erasure), then the saved copy is destroyed and no later start brings them back', async () => {
    const file = fileIn();
    const store = await filled(file);
    expect(await store.save()).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('alice');
    await store.collection('entries').deleteMany({ userId: 'alice' });
    expect(existsSync(file)).toBe(false);
    // A crash now: the next start has no copy and rebuilds from the log (which no longer holds alice's events).
    expect(await (await open(file)).collection('entries').count({})).toBe(0);
    // The next save holds only what is left.
    await store.close();
    expect(readFileSync(file, 'utf8')).not.toContain('alice/');
    expect(await (await open(file)).collection('entries').count({})).toBe(1);
  });

  it.each([0, 1, 2, 3, 5, 8, 13])(
    'when a deletion comes while a save is under way (after %i turns of the event loop), then no file keeps the deleted documents',
    async (turns) => {
      const file = fileIn();
      const store = await filled(file);
      const saving = store.save();
      for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
      await store.collection('entries').deleteMany({ userId: 'alice' });
      await saving;
      expect(existsSync(`${file}.tmp`)).toBe(false);
      // Stopped, landed before the deletion (and destroyed by it) or begun after it: no file holds alice's documents.
      if (existsSync(file)) expect(readFileSync(file, 'utf8')).not.toContain('alice/');
    },
  );

  it('given checkpoints that advanced by saveEvery, when the interval passes, then a copy is saved without a stop', async () => {
    const file = fileIn();
    const store = await open(file, 10_000n, { saveEvery: 2, checkIntervalMs: 5 });
    await store.collection<Entry>('entries').upsertIfNewer({ _id: 'a', userId: 'alice', date: 1, revision: 1 });
    await store.checkpoints().save('p', 1n);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(existsSync(file)).toBe(false);
    await store.checkpoints().save('p', 2n);
    for (let i = 0; i < 50 && !existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    // A crash now: the copy saved at checkpoint 2 is what the next start has.
    const after = await open(file);
    expect(await after.checkpoints().load('p')).toBe(2n);
    expect(await after.collection('entries').get('a')).toMatchObject({ userId: 'alice' });
    await store.close();
  });
});
