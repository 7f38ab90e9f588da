#!/usr/bin/env node
// `npm run token -- <userId>`: builds the token tool if needed (quietly), then prints only the token.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--tool codops-secret` runs the codops-secret tool the same way (`npm run codops-secret -- <codops>`).
const named = process.argv[2] === '--tool' ? process.argv[3] : 'token';
const args = process.argv.slice(named === 'token' ? 2 : 4);
const tool = join(root, 'dist', 'apps', 'gateway', `${named}.js`);
if (!existsSync(tool)) {
  const built = spawnSync(process.execPath, [join(root, 'tools', 'build.mjs'), 'gateway'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const result = spawnSync(process.execPath, [tool, ...args], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
