#!/usr/bin/env node
// `npm run lint` runs this: every app is laid out as docs/architecture.md ("Layout of an app") says, and every
// spec file says its kind in its name. Prints one line per offending file and exits 1; silent when all is well.
//   node tools/lint/layout.mjs [workspace root]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folders every service has under src/, and the files they must hold. */
const SERVICE_FOLDERS = ['domain', 'api', 'projections', 'testing'];
const SERVICE_REQUIRED = ['main.ts', 'app.ts', 'domain/aggregate.ts', 'domain/decider.ts', 'api', 'projections'];
/** The gateway has no domain of its own: its app is libs/gateway-core. */
const GATEWAY_REQUIRED = ['main.ts', 'config.ts'];
/** A service's real extra part, one named folder each (a new one is added here and in docs/architecture.md). */
const EXTRA_FOLDERS = {
  'catalogue-svc': ['import'],
  'export-worker': ['worker'],
  'preference-svc': ['migrations'],
  gateway: ['cli'],
};
const ROOT_FILES = ['main.ts', 'app.ts', 'config.ts', 'config.unit.spec.ts'];
/** Specs of the whole service (the process main.ts wires, or the app on real servers): main.<what>.<kind>.spec.ts. */
const WHOLE_SERVICE_SPEC = /^main\.[a-z0-9-]+\.(unit|api|int)\.spec\.ts$/;
const SPEC = /\.spec\.ts$/;
const NAMED_SPEC = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.(unit|api|int)\.spec\.ts$/;
/** Folders whose specs are pure: the domain (no I/O by rule) and the projections (given events, then documents). */
const UNIT_ONLY = new Set(['domain', 'projections']);

export function checkLayout(root) {
  const problems = [];
  const say = (path, message) => problems.push(`${relative(root, path) || path}: ${message}`);
  const appsDir = join(root, 'apps');
  for (const app of readdirSync(appsDir).sort()) {
    const src = join(appsDir, app, 'src');
    if (!statSync(join(appsDir, app)).isDirectory()) continue;
    if (!existsSync(src)) {
      say(join(appsDir, app), 'an app has its code under src/');
      continue;
    }
    const gateway = app === 'gateway';
    for (const required of gateway ? GATEWAY_REQUIRED : SERVICE_REQUIRED) {
      if (!existsSync(join(src, required))) say(join(src, required), 'missing: every service has it');
    }
    const folders = new Set([...(gateway ? [] : SERVICE_FOLDERS), ...(EXTRA_FOLDERS[app] ?? [])]);
    for (const entry of readdirSync(src, { withFileTypes: true })) {
      const path = join(src, entry.name);
      if (entry.isDirectory()) {
        if (!folders.has(entry.name)) {
          const holds = [...folders].map((f) => f + '/').join(', ') || 'no folder';
          for (const file of filesUnder(path)) {
            say(
              file,
              `in an unexpected folder src/${entry.name}/; this app's src/ holds ${holds} (a new part: here and in docs/architecture.md)`,
            );
          }
        } else {
          checkFolder(path, entry.name, say);
        }
      } else if (!ROOT_FILES.includes(entry.name) && !WHOLE_SERVICE_SPEC.test(entry.name)) {
        say(
          path,
          SPEC.test(entry.name)
            ? 'a spec at src/ root tests the whole service and is named main.<what>.<unit|api|int>.spec.ts'
            : `unexpected at src/ root (only ${ROOT_FILES.filter((f) => !SPEC.test(f)).join(', ')}); put it in a folder`,
        );
      }
    }
  }
  return problems;
}

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

function checkFolder(dir, folder, say) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      checkFolder(path, folder, say);
      continue;
    }
    if (!SPEC.test(entry.name)) continue;
    if (!NAMED_SPEC.test(entry.name)) say(path, 'a spec is named <what>.<unit|api|int>.spec.ts');
    else if (folder === 'testing') say(path, 'src/testing/ holds fixtures, not specs: put the spec next to the code it tests');
    else if (UNIT_ONLY.has(folder) && !entry.name.endsWith('.unit.spec.ts')) say(path, `${folder}/ specs are pure: *.unit.spec.ts`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const problems = checkLayout(root);
  for (const problem of problems) console.error(`layout: ${problem}`);
  if (problems.length) {
    console.error(`layout: ${problems.length} file(s) out of place; the layout is in docs/architecture.md ("Layout of an app")`);
    process.exit(1);
  }
}
