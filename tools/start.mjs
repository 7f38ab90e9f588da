#!/usr/bin/env node
// `npm start`: installs dependencies if they are missing, builds, and runs the embedded system.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`start: "${cmd} ${args.join(' ')}" failed\n`);
    process.exit(result.status ?? 1);
  }
};

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  process.stderr.write('start: installing dependencies (npm ci)...\n');
  // If better-sqlite3 has to compile (no prebuilt binary reachable), node-gyp uses the headers of this Node
  // instead of downloading them.
  const nodeDir = dirname(dirname(process.execPath));
  if (!process.env.npm_config_nodedir && existsSync(join(nodeDir, 'include', 'node', 'node.h'))) process.env.npm_config_nodedir = nodeDir;
  run('npm', ['ci', '--loglevel=warn']);
}
run(process.execPath, [join(root, 'tools', 'build.mjs')]);

const child = spawn(process.execPath, ['--enable-source-maps', join(root, 'dist', 'embedded', 'main.js')], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
