#!/usr/bin/env node
// `npm start`: installs dependencies if they are missing, builds, and runs the embedded system, saying at each
// step what it is doing; the embedded host ends with a block that says where the system is and what to do next.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noticeUnsupportedNode } from './node-support.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
noticeUnsupportedNode('start');
const terminal = Boolean(process.stderr.isTTY);
const say = (line) => process.stderr.write(`start: ${line}\n`);
const seconds = (since) => `${Math.round((Date.now() - since) / 100) / 10} s`;
// `npm start -- --outdir DIR` builds into DIR and runs from there rather than dist/ (a test, beside a running system).
const outdirAt = process.argv.indexOf('--outdir');
const outdir = outdirAt > 0 && process.argv[outdirAt + 1] ? resolve(process.argv[outdirAt + 1]) : join(root, 'dist');

/** The step's process running now (npm ci, the build, then the system), which a stop passes on to. */
let current;
let stopping = false;
function stop(signal) {
  stopping = true;
  if (current && current.exitCode === null && current.signalCode === null) current.kill(signal);
  else process.exit(1);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stop(signal));
// `kill <pid of npm start>`: npm passes the signal to its script's shell only, which dies and leaves us running. No
// event says that the process that started us is gone, but our parent then changes: we stop as if sent SIGTERM. Run by
// npm, the shell between us may outlive npm (kill -9 npm): then the shell's parent changes, which Linux shows in /proc.
const parentOf = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
};
const parent = process.ppid;
const npm = process.env.npm_lifecycle_event ? parentOf(parent) : undefined;
setInterval(() => {
  if (stopping || (process.ppid === parent && (npm === undefined || parentOf(parent) === npm))) return;
  say('the process that started this one is gone (npm killed?): stopping');
  stop('SIGTERM');
}, 500).unref();

/** Runs a command to its end; while it runs, a terminal sees the time go by (npm ci can be quiet for minutes). */
function run(cmd, args, env = process.env) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', env });
    current = child;
    const ticker = terminal
      ? setInterval(() => process.stderr.write(`\r\x1b[2K  ... ${Math.round((Date.now() - started) / 1000)} s`), 1000)
      : undefined;
    child.on('exit', (code, signal) => {
      if (ticker) {
        clearInterval(ticker);
        process.stderr.write('\r\x1b[2K');
      }
      if (code === 0 && !stopping) return resolve();
      if (stopping) process.exit(code ?? 1);
      say(`"${cmd} ${args.join(' ')}" failed${signal ? ` (${signal})` : ''}`);
      process.exit(code ?? 1);
    });
  });
}

/**
 * If better-sqlite3 has to compile (no prebuilt binary reachable), node-gyp uses the headers of this Node instead
 * of downloading them. npm 11 warns about `npm_config_nodedir` (not an npm setting); node-gyp 11, which it runs,
 * reads the same setting from `npm_package_config_node_gyp_nodedir`, which npm leaves alone. Older npm: the old name.
 */
function installEnv() {
  const nodeDir = dirname(dirname(process.execPath));
  if (process.env.npm_config_nodedir || process.env.npm_package_config_node_gyp_nodedir) return process.env;
  if (!existsSync(join(nodeDir, 'include', 'node', 'node.h'))) return process.env;
  const npmMajor = Number(spawnSync('npm', ['--version'], { encoding: 'utf8' }).stdout?.split('.')[0]);
  return { ...process.env, [npmMajor >= 11 ? 'npm_package_config_node_gyp_nodedir' : 'npm_config_nodedir']: nodeDir };
}

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  say('1/3 installing dependencies (npm ci, first start only; a minute, several when better-sqlite3 has to compile)');
  const since = Date.now();
  // Errors only: the engine notices concern test-only packages (see the README, "Tests").
  await run('npm', ['ci', '--loglevel=error', '--no-audit', '--no-fund', '--no-progress'], installEnv());
  say(`1/3 dependencies installed in ${seconds(since)}`);
} else {
  say('1/3 dependencies already installed');
}

say('2/3 building the apps (esbuild)');
await run(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', outdir]);

say('3/3 starting the gateway and the five services in one process (their logs follow)');
current = spawn(process.execPath, ['--enable-source-maps', join(outdir, 'embedded', 'main.js')], {
  cwd: root,
  // The same terminal: the apps log pretty lines to a terminal, JSON lines anywhere else. The IPC channel closes
  // when this process ends, however it ends (kill -9 too), and the system stops then (runAsProcess).
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
});
current.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
