#!/usr/bin/env node
// `npm run token -- <userId>`: builds the token tool if needed (quietly), then prints only the token.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tool = join(root, 'dist', 'apps', 'gateway', 'token.js');
if (!existsSync(tool)) {
  const built = spawnSync(process.execPath, [join(root, 'tools', 'build.mjs'), 'gateway'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const result = spawnSync(process.execPath, [tool, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
