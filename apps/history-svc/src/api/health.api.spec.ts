import { copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@udp/eventstore';
import { MemoryReadModelStore } from '@udp/readmodel';
import { given } from '@udp/test-kit';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createHistoryService } from '../app';

/**
 * /health/ exercises what a write needs, and a write that cannot be made durable is refused (503), never
 * acknowledged: history-svc on a real SQLite file, driven through the gateway, with the file taken away.
 */
let dir: string;
let file: string;
let system: TestSystem;
let alice: string;
let readModels: MemoryReadModelStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'udp-health-'));
  file = join(dir, 'data', 'history-svc', 'events.sqlite');
  readModels = new MemoryReadModelStore();
  system = await startTestSystem([
    {
      prefixes: ['/api/history'],
      create: (deps) => createHistoryService(deps),
      adapters: { store: new SqliteEventStore(file), readModels },
    },
  ]);
  alice = await system.auth('alice');
});
afterEach(async () => {
  await system.stop();
  rmSync(dir, { recursive: true, force: true });
});

const post = (itemId: string) => system.http.post('/api/history/v2').set('authorization', alice).send({ item_id: itemId });
const list = () => system.http.get('/api/history/v2?with_deleted=true').set('authorization', alice);

const health = () => system.http.get('/health/');
const nothing = () => undefined;

/** The gateway's answer names the service; the service's own answer names the part. */
const expectDown =
  (part: string) =>
  (gateway: Awaited<ReturnType<typeof health>>): void => {
    expect(gateway.status).toBe(503);
    expect(gateway.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(gateway.body.detail).toContain(`(${part})`);
    expect(gateway.body.services['/api/history']).toMatchObject({ status: 'DOWN', checks: { [part]: 'DOWN' } });
  };

it('answers UP while the store works', async () => {
  await given(async () => expect((await post('urn:a')).status).toBe(200))
    .when(health)
    .then((res) => {
      expect(res.status).toBe(200);
      expect(res.text).toBe('UP');
    });
});

describe('when DATA_DIR is removed while the service runs', () => {
  /** urn:before written, then the data directory removed: the state every test here starts from. */
  beforeEach(async () => {
    expect((await post('urn:before')).status).toBe(200);
    rmSync(join(dir, 'data'), { recursive: true, force: true });
  });

  it('refuses writes with 503 instead of acknowledging them into an unlinked file', async () => {
    await given(nothing)
      .when(() => post('urn:after'))
      .then(async (res) => {
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBeDefined();
        expect(res.body).toMatchObject({ status: 503, unavailable: 'event store' });
        expect(res.body.detail).not.toContain(dir);
        expect(res.text).not.toMatch(/\bat .*\.ts:\d+/);
        expect((await list()).body.data.map((i: { item_id: string }) => i.item_id)).toEqual(['urn:before']);
      });
  });

  it('says DOWN, naming the event store', () => given(nothing).when(health).then(expectDown('event_store')));
});

describe('when the SQLite file is overwritten', () => {
  /** urn:before written, then the file overwritten with garbage: the state every test here starts from. */
  beforeEach(async () => {
    expect((await post('urn:before')).status).toBe(200);
    writeFileSync(file, 'not a database '.repeat(500));
  });

  it('refuses writes with 503, not 500', async () => {
    await given(nothing)
      .when(() => post('urn:after'))
      .then((res) => expect(res.status).toBe(503));
  });

  it('says DOWN, naming the event store', () => given(nothing).when(health).then(expectDown('event_store')));
});

describe('when another file is put in its place', () => {
  /** urn:before written, then a copy of the file renamed over it: the state every test here starts from. */
  beforeEach(async () => {
    expect((await post('urn:before')).status).toBe(200);
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);
  });

  it('refuses writes with 503 and says DOWN', async () => {
    await given(nothing)
      .when(() => post('urn:after'))
      .then((res) => expect(res.status).toBe(503));
    await given(nothing).when(health).then(expectDown('event_store'));
  });
});

describe('when the read models do not answer', () => {
  /** Read models whose ping fails: the state every test here starts from. */
  beforeEach(() => {
    jest.spyOn(readModels, 'ping').mockResolvedValue(false);
  });

  it('refuses writes with 503 and stores nothing (the write could not become visible)', async () => {
    await given(nothing)
      .when(() => post('urn:unseen'))
      .then(async (res) => {
        expect(res.status).toBe(503);
        expect(res.body.unavailable).toBe('read models');
        jest.restoreAllMocks();
        expect((await list()).body.data).toEqual([]);
      });
  });

  it('says DOWN, naming the read models', () => given(nothing).when(health).then(expectDown('read_models')));
});
