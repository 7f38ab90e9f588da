#!/usr/bin/env node
// node bench/trending.mjs: the trending query before (a scan of every history entry of the window) and after
// (the counts per item and hour the history projection keeps), in one process on the memory read model (not a
// test; no network). --users=3000 --entries=70 --items=5000 --runs=30
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? String(fallback);
const outfile = join(root, 'dist', 'bench', 'trending-measure.js');
const { build } = await import('esbuild');
await build({
  entryPoints: [join(root, 'bench', 'trending-measure.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  packages: 'external',
  tsconfig: join(root, 'tsconfig.base.json'),
  logLevel: 'warning',
});
execFileSync(process.execPath, [outfile, arg('users', 3000), arg('entries', 70), arg('items', 5000), arg('runs', 30)], {
  stdio: 'inherit',
});
