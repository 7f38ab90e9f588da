import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The file a worker thread runs (`name`: sqlite-writer, sqlite-checkpointer), looked for in turn:
 * - beside the running bundle (`dir`, its __dirname): dist/ holds every worker's bundle beside each bundle (tools/build.mjs);
 * - in WORKER_BUNDLES_DIR: jest's global setup bundles them there on a Node that cannot run TypeScript (below 22.18,
 *   e.g. the Node 20.19 the README allows; tools/jest-global-setup.js);
 * - the TypeScript source itself (`dir` is then the sources' folder), which Node >= 22.18 runs by stripping its types.
 */
export function workerEntry(dir: string, name: string): string {
  const built = join(dir, `${name}.js`);
  if (existsSync(built)) return built;
  const bundles = process.env.WORKER_BUNDLES_DIR;
  if (bundles && existsSync(join(bundles, `${name}.js`))) return join(bundles, `${name}.js`);
  if (!(process.features as { typescript?: unknown }).typescript) {
    throw new Error(
      `${name} runs from its TypeScript source on Node >= 22.18 only (this is ${process.version}): build first (tools/build.mjs), or set WORKER_BUNDLES_DIR`,
    );
  }
  return join(dir, `${name}.ts`);
}
