import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The committed types are what the OpenAPI document gives today (the check CI runs before its type check): a change to
 * the route tables or their schemas without `npm run client:generate` fails here, naming the first line that differs.
 */
it('openapi.generated.ts is generated from the current OpenAPI document', () => {
  const root = join(__dirname, '..', '..', '..');
  const check = spawnSync(process.execPath, [join(root, 'tools', 'client', 'generate.mjs'), '--check'], { cwd: root, encoding: 'utf8' });
  expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
});
