#!/usr/bin/env node
// node bench/jsonpath.mjs [steps]: the longest a JSONPath evaluation of preference-svc can take. Builds the hostile
// documents (the deepest nesting the service accepts, a 256 KiB document, nested arrays) and expressions (up to 8
// descendant segments, the longest expressions, unions of 32 indexes), counts each one's steps as the service does
// (PREFERENCE_MAX_JSONPATH_STEPS, default 100,000 or the argument), and times every accepted one as GET and DELETE
// evaluate it (best and worst of 5 runs). Not a test; bounded loops; needs no build (esbuild bundles the domain code).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'tmp', 'bench-jsonpath', 'json-document.js');
mkdirSync(dirname(out), { recursive: true });
execFileSync(
  join(root, 'node_modules', '.bin', 'esbuild'),
  [
    'apps/preference-svc/src/domain/json-document.ts',
    'apps/preference-svc/src/domain/jsonpath-cost.ts',
    '--bundle',
    '--platform=node',
    '--format=cjs',
    `--outdir=${join(root, 'tmp', 'bench-jsonpath')}`,
    '--log-level=error',
    '--tsconfig=tsconfig.base.json',
    '--external:@kurrent/*',
    '--external:better-sqlite3',
    '--external:mongodb',
    '--external:kafkajs',
    '--external:@opentelemetry/*',
  ],
  { cwd: root },
);
const require = createRequire(out);
const { queryJsonPath, deleteJsonPathMatches, checkDocument } = require(out);
const { jsonPathCost } = require(join(root, 'tmp', 'bench-jsonpath', 'jsonpath-cost.js'));

const steps = Number(process.argv[2] ?? 100_000);
const limits = {
  maxDocumentBytes: 256 * 1024,
  maxPathDepth: 32,
  maxKeyLength: 256,
  maxJsonPathSteps: steps,
  maxJsonPathResultBytes: 4 * 1024 * 1024,
};

/** `{"a":{"a":...{"zz":1}}}`, `depth` objects deep, each level with `pad` extra scalar fields. */
function chain(depth, pad = 0) {
  let document = { zz: 1 };
  for (let i = 1; i < depth; i++) {
    document = { a: document };
    for (let p = 0; p < pad; p++) document[`p${p}`] = p;
  }
  return document;
}
/** `{"x":[[[...[1]...]]]}`, arrays `depth` deep. */
function arrays(depth) {
  let value = [1];
  for (let i = 2; i < depth; i++) value = [value];
  return { x: value };
}
/** A document of about 256 KiB: 2,000 entries of a favourites map, each a small object. */
function wide() {
  const favorites = {};
  for (let i = 0; i < 2_000; i++) favorites[`urn:show:${i}`] = { date: 1_700_000_000_000 + i, a: { a: i, tags: ['x', 'y'] } };
  return { favorites, a: { a: { a: 1 } } };
}

/** About 256 KiB of the smallest nodes: an array of 85,000 empty arrays. */
const tiny = () => ({ a: Array.from({ length: 85_000 }, () => []) });

const documents = {
  'chain 32 deep': chain(32),
  'chain 32 deep, 100 fields a level': chain(32, 100),
  'arrays 32 deep': arrays(32),
  '256 KiB map': wide(),
  '256 KiB of empty arrays': tiny(),
};
for (const [name, document] of Object.entries(documents)) {
  checkDocument(document, limits); // each is a document the service accepts
  console.log(`${name}: ${JSON.stringify(document).length} bytes`);
}

const descendants = (k) => '$' + '..a'.repeat(k) + '..zz';
const expressions = [
  ...[1, 2, 3, 4, 5, 6, 7, 8].map(descendants),
  '$..*',
  '$..*..*',
  // `['$']` is a step that stays where it is: long expressions, whose steps cost more.
  ...[16, 28, 60, 120, 190].map((n) => '$..a..a' + "['$']".repeat(n)),
  '$.x' + `[${Array(32).fill(0).join(',')}]`.repeat(15),
  '$..a..*..*',
  '$.*.*.*.*',
  '$.a[*]',
  '$.a[0:100000:1]',
];

const time = (fn) => {
  const start = process.hrtime.bigint();
  try {
    fn();
    return { ms: Number(process.hrtime.bigint() - start) / 1e6, outcome: 'ok' };
  } catch (error) {
    return {
      ms: Number(process.hrtime.bigint() - start) / 1e6,
      outcome: `${error.kind ?? 'Error'}: ${String(error.message).slice(0, 40)}`,
    };
  }
};
const runs = (fn) => {
  const all = Array.from({ length: 5 }, () => time(fn));
  const ms = all.map((r) => r.ms).sort((a, b) => a - b);
  return { best: ms[0].toFixed(1), worst: ms[ms.length - 1].toFixed(1), outcome: all[0].outcome };
};

let worst = { ms: 0 };
console.log(`budget ${steps} steps; times in ms (best / worst of 5)`);
for (const [name, document] of Object.entries(documents)) {
  for (const expression of expressions) {
    if (expression.length > 1024) throw new Error(`expression too long: ${expression.length}`);
    const cost = jsonPathCost(document, expression, steps);
    const get = runs(() => queryJsonPath(document, expression, limits));
    const del = runs(() => deleteJsonPathMatches(document, expression, limits));
    const label = expression.length > 40 ? `${expression.slice(0, 37)}... (${expression.length} chars)` : expression;
    console.log(
      `${name.padEnd(34)} ${label.padEnd(48)} ${cost.overBudget ? `refused (> ${steps} steps)` : `${cost.steps} steps`}` +
        `  GET ${get.best}/${get.worst} ${get.outcome}  DELETE ${del.best}/${del.worst} ${del.outcome}`,
    );
    for (const [kind, r] of [
      ['GET', get],
      ['DELETE', del],
    ]) {
      if (Number(r.worst) > worst.ms) worst = { ms: Number(r.worst), kind, name, label, outcome: r.outcome };
    }
  }
}
console.log(`slowest: ${worst.ms} ms, ${worst.kind} ${worst.label} on ${worst.name} (${worst.outcome})`);
