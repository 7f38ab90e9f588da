#!/usr/bin/env node
// Bundles each app with esbuild into a runnable process entry, plus the embedded host and the token tool.
// Path aliases are resolved; node_modules stay external so native modules and OpenTelemetry's require
// hooks work as usual. An app's main.ts only exports `start`; the entry that runs it is generated here.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Tracing starts before anything else is loaded: OpenTelemetry can only wrap http, express, mongodb and
// kafkajs if it is running when they are first required. `require` (not `import`) keeps the app's modules,
// and the packages they load, from being evaluated before that.
const processEntry = (app, source) => `import { startTracing } from '@udp/telemetry';
startTracing({ serviceName: '${app}', otlpEndpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined });
const { runAsProcess } = require('@udp/runtime');
const { start } = require('./${source}');
runAsProcess('${app}', () => start());
`;

/** name -> [outfile, entry]: `source` is a file; `stdin` a generated entry. */
export const ENTRIES = {
  gateway: [
    ['apps/gateway/main.js', { stdin: processEntry('gateway', 'apps/gateway/src/main') }],
    ['apps/gateway/token.js', { source: 'apps/gateway/src/cli/token.ts' }],
    ['apps/gateway/codops-secret.js', { source: 'apps/gateway/src/cli/codops-secret.ts' }],
  ],
  'history-svc': [['apps/history-svc/main.js', { stdin: processEntry('history-svc', 'apps/history-svc/src/main') }]],
  'playlist-svc': [['apps/playlist-svc/main.js', { stdin: processEntry('playlist-svc', 'apps/playlist-svc/src/main') }]],
  'preference-svc': [['apps/preference-svc/main.js', { stdin: processEntry('preference-svc', 'apps/preference-svc/src/main') }]],
  'profile-svc': [['apps/profile-svc/main.js', { stdin: processEntry('profile-svc', 'apps/profile-svc/src/main') }]],
  'catalogue-svc': [['apps/catalogue-svc/main.js', { stdin: processEntry('catalogue-svc', 'apps/catalogue-svc/src/main') }]],
  'export-worker': [['apps/export-worker/main.js', { stdin: processEntry('export-worker', 'apps/export-worker/src/main') }]],
  conformance: [['tools/conformance.js', { source: 'libs/qc-conformance/src/cli.ts' }]],
  'bench-seed': [['bench/seed.js', { source: 'bench/seed.ts' }]],
  embedded: [['embedded/main.js', { stdin: processEntry('embedded', 'tools/embedded/host') }]],
};

/**
 * Worker threads a bundle starts by file, each built beside every bundle (a bundle finds it in its own directory):
 * the SQLite event store's writer (libs/eventstore/src/sqlite.ts, `writerEntry`) and the SQLite read models'
 * checkpointer (libs/readmodel/src/sqlite.ts, `checkpointerEntry`).
 */
const WORKERS = [
  ['sqlite-writer.js', { source: 'libs/eventstore/src/sqlite-writer.ts' }],
  ['sqlite-checkpointer.js', { source: 'libs/readmodel/src/sqlite-checkpointer.ts' }],
];

export async function buildEntries(names = Object.keys(ENTRIES), outdir = join(root, 'dist')) {
  const outputs = []; // [name, outfile, entry]
  for (const name of names) {
    if (!ENTRIES[name]) throw new Error(`unknown build entry ${name} (known: ${Object.keys(ENTRIES).join(', ')})`);
    for (const [outfile, entry] of ENTRIES[name]) outputs.push([name, outfile, entry]);
  }
  const directories = new Set(outputs.map(([, outfile]) => dirname(outfile)));
  for (const directory of directories) {
    for (const [file, entry] of WORKERS) outputs.push([file, join(directory, file), entry]);
  }
  await Promise.all(outputs.map(([name, outfile, entry]) => bundle(name, join(outdir, outfile), entry)));
  return outdir;
}

/**
 * The worker threads' bundles alone, in `outdir` (which must lie inside the repository, where their packages are
 * found): jest's global setup (tools/jest-global-setup.js) runs the sources on a Node that cannot run TypeScript.
 */
export async function buildWorkers(outdir) {
  await Promise.all(WORKERS.map(([file, entry]) => bundle(file, join(outdir, file), entry)));
  return outdir;
}

function bundle(name, outfile, entry) {
  return build({
    ...(entry.stdin
      ? { stdin: { contents: entry.stdin, resolveDir: root, sourcefile: `${name}-entry.ts`, loader: 'ts' } }
      : { entryPoints: [join(root, entry.source)] }),
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    // The EBU QC schemas are bundled as text (libs/qc-schema).
    loader: { '.xsd': 'text' },
    sourcemap: true,
    tsconfig: join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
    // Node's on-disk cache of compiled code (`module.enableCompileCache`, Node >= 22.8; absent on 20), for the
    // packages the bundle requires at start: the embedded start-up with an empty store fell from 720-990 to
    // 520-825 ms (Node 26, five alternating pairs).
    // In os.tmpdir() unless NODE_COMPILE_CACHE names another place; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
    // The banner goes before the bundle's own "use strict", so it repeats it: the bundle stays strict code.
    banner: { js: '"use strict";\nrequire(\'node:module\').enableCompileCache?.();' },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // usage: node tools/build.mjs [--outdir DIR] [entry...]   or   node tools/build.mjs --outdir DIR --workers
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const workers = args.includes('--workers');
  const names = args.filter((a) => !a.startsWith('-'));
  const started = Date.now();
  if (workers && (!outdir || names.length)) {
    process.stderr.write('--workers builds the worker threads alone, into the --outdir given\n');
    process.exit(2);
  }
  (workers ? buildWorkers(outdir) : buildEntries(names.length ? names : undefined, outdir)).then(
    () =>
      process.stderr.write(
        `built ${workers ? 'the workers' : names.length ? names.join(', ') : 'everything'} in ${Date.now() - started} ms\n`,
      ),
    (error) => {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    },
  );
}
