import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverlessEnv } from './embedded-process';

/**
 * `npm start` stops with whatever started it. npm passes a SIGTERM to its script's shell only, which dies and used to
 * leave tools/start.mjs and the system running (issue 27): the start script now notices that its parent changed, and
 * the system that its start script's IPC channel closed. Run through the real CLI, built apart from dist/.
 */
const root = join(__dirname, '..', '..');
const outdir = join(root, 'tmp', `npm-start-${process.pid}`);
const started: ChildProcess[] = [];
let dataDir: string;

beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'udp-npm-start-'))));
afterEach(() => {
  // Whatever a failed test left: the whole process group it started.
  for (const child of started.splice(0)) if (child.pid) signalGroup(child.pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Linux's view of a process: its parent and whether it still runs (a zombie that nobody reaps does not). */
function stat(pid: number): { ppid: number; running: boolean } | undefined {
  try {
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so read after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(ppid), running: state !== 'Z' && state !== 'X' };
  } catch {
    return undefined;
  }
}

/** Every process below `pid` (children, their children...), by /proc. */
function descendants(pid: number): number[] {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => ({ pid: Number(name), ppid: stat(Number(name))?.ppid }));
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length;) {
    frontier = all.filter((p) => p.ppid !== undefined && frontier.includes(p.ppid)).map((p) => p.pid);
    found.push(...frontier);
  }
  return found;
}

/** Resolves once none of `pids` runs any more, polled every 100 ms; rejects after `withinMs` naming those left. */
async function allGone(pids: number[], withinMs: number): Promise<number> {
  const since = Date.now();
  for (;;) {
    const left = pids.filter((pid) => stat(pid)?.running);
    if (left.length === 0) return Date.now() - since;
    if (Date.now() - since > withinMs) throw new Error(`still running after ${withinMs} ms: ${left.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `npm start` (or the start script itself) in a process group of its own, resolved once the gateway listens. */
async function startSystem(command: 'npm' | 'script') {
  const [cmd, args] =
    command === 'npm'
      ? ['npm', ['start', '--', '--outdir', outdir]]
      : [process.execPath, [join(root, 'tools', 'start.mjs'), '--outdir', outdir]];
  const child = spawn(cmd, args, {
    cwd: root,
    env: serverlessEnv(dataDir, { LOG_FORMAT: 'json', LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const check = () => /gateway on http:\/\/localhost:\d+/.test(stderr) && resolve();
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before it was ready:\n${stderr}`)));
  });
  const below = (what: string) => descendants(child.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(what));
  const system = below('embedded/main.js');
  const script = command === 'npm' ? below('tools/start.mjs') : child.pid;
  if (!system || !script) throw new Error(`no system or start script below ${command} (${child.pid}):\n${stderr}`);
  return { child, system, script, stderr: () => stderr };
}

const linux = existsSync('/proc/self/stat');
const onLinux = linux ? it : it.skip;
if (!linux) it.todo('runs on Linux only: it follows the processes through /proc');

onLinux.each(['SIGTERM', 'SIGKILL'] as const)(
  'when the npm process of `npm start` is killed (%s), the start script and the system stop too, the system gracefully',
  async (signal) => {
    const { child, system, script, stderr } = await startSystem('npm');
    process.kill(child.pid!, signal);
    await allGone([child.pid!, script, system], 15_000);
    expect(stderr()).toContain('the process that started this one is gone');
    expect(stderr()).toMatch(/embedded: SIGTERM, stopping/);
    expect(stderr()).not.toMatch(/not stopped within|stop failed/);
  },
  120_000,
);

onLinux(
  'when the start script is killed outright (SIGKILL), the system notices its parent gone and stops gracefully',
  async () => {
    const { system, script, stderr } = await startSystem('script');
    process.kill(script, 'SIGKILL');
    await allGone([system], 15_000);
    expect(stderr()).toMatch(/embedded: parent process gone, stopping/);
    expect(stderr()).not.toMatch(/not stopped within|stop failed/);
  },
  120_000,
);

onLinux(
  'a SIGTERM to the start script reaches the system, which stops gracefully, and the script exits 0 with it',
  async () => {
    const { child, system, stderr } = await startSystem('script');
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    process.kill(child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    await allGone([system], 15_000);
    expect(stderr()).toMatch(/embedded: SIGTERM, stopping/);
  },
  120_000,
);
