import { execFileSync } from 'node:child_process';
import { baseOf, embeddedProcess } from './embedded-process';

/**
 * The quick start as a user runs it: the embedded bundle as a process, a token from `npm run token`,
 * requests through the gateway, then a restart on the same data (read models rebuilt from the store).
 */
const embedded = embeddedProcess('embedded');
const { root, dataDir } = embedded;

beforeAll(() => embedded.build(), 60_000);
afterAll(() => embedded.remove());

const startEmbedded = () => embedded.start();

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
