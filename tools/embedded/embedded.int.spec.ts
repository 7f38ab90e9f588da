import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StartedProcess, startProcess } from '@udp/test-kit';

/**
 * The quick start as a user runs it: the embedded bundle as a process, a token from `npm run token`,
 * requests through the gateway, then a restart on the same data (read models rebuilt from the store).
 */
const root = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'udp-embedded-'));
const distDir = join(root, 'tmp', `embedded-${process.pid}`);
// The embedded mode is what runs when no server is configured: drop any the test run itself was given.
const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...embeddedEnv } = process.env;

beforeAll(() => {
  execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir], { stdio: 'inherit' });
}, 60_000);
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(distDir, { recursive: true, force: true });
});

const startEmbedded = () =>
  startProcess(
    join(distDir, 'embedded', 'main.js'),
    { ...embeddedEnv, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
    {
      stream: 'stderr',
      pattern: /gateway on http:\/\/localhost:(\d+)/,
    },
  );
const baseOf = (system: StartedProcess) => `http://127.0.0.1:${system.ready[1]}`;

function token(userId: string): string {
  // The npm script as documented; npm's banner must not reach stdout.
  return execFileSync('npm', ['run', '--silent', 'token', '--', userId], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir },
  }).toString();
}

it('serves the API through the gateway and keeps data across a restart', async () => {
  const first = await startEmbedded();
  const printed = execFileSync('npm', ['run', 'token', '--', 'alice'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir },
  }).toString();
  expect(printed).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
  const auth = { authorization: `Bearer ${printed.trim()}`, 'content-type': 'application/json' };
  try {
    expect(await (await fetch(`${baseOf(first)}/health/`)).text()).toBe('UP');
    expect((await fetch(`${baseOf(first)}/openapi.json`)).headers.get('content-type')).toMatch(/json/);
    const posted = await fetch(`${baseOf(first)}/api/history/v2`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ item_id: 'urn:show:1', last_playback_position: 61.5 }),
    });
    expect(posted.status).toBe(200);
    expect(await posted.json()).toMatchObject({ item_id: 'urn:show:1', last_playback_position: 61.5 });
    const sessionAuth = { authorization: `sessionToken ${token('alice').trim()}` };
    const list = (await (await fetch(`${baseOf(first)}/api/history/v2`, { headers: sessionAuth })).json()) as {
      data: Array<{ item_id: string }>;
    };
    expect(list.data.map((i) => i.item_id)).toEqual(['urn:show:1']);
    const bookmarked = await fetch(`${baseOf(first)}/api/playlist/v3/watch_later/bookmarks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ itemId: 'urn:show:2' }),
    });
    expect(bookmarked.status).toBe(201);
  } finally {
    await first.stop();
  }

  const second = await startEmbedded();
  try {
    const positions = await (await fetch(`${baseOf(second)}/api/history/v2/positions`, { headers: auth })).json();
    expect(positions).toEqual({ 'urn:show:1': 61.5 });
    const playlist = (await (await fetch(`${baseOf(second)}/api/playlist/v2/watch_later/bookmarks`, { headers: auth })).json()) as {
      system: boolean;
      bookmarks: Array<{ media_id: string }>;
    };
    expect([playlist.system, playlist.bookmarks.map((b) => b.media_id)]).toEqual([true, ['urn:show:2']]);
  } finally {
    await second.stop();
  }
}, 60_000);
