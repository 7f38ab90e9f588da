// node bench/layers.mjs <main-thread .cpuprofile> <requests> [window function]: each CPU sample of the load window attributed to a layer
// (the leaf-most frame matching a rule below), printed as µs per request. Rules match function names: the bundle is one file.
import { readFileSync } from 'node:fs';
const [file, requests] = [process.argv[2], Number(process.argv[3])];
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const rules = [
  ['idle', (f) => f === '(idle)'],
  ['GC', (f) => f === '(garbage collector)'],
  [
    'identity header: HMAC sign + verify (gateway -> service)',
    (f, u) => f === 'Hmac' || (/embedded\/main/.test(u) && /^(sign|verify)$/.test(f)),
  ],
  [
    'tracing: OpenTelemetry spans, context, debug-span capture',
    (f, u) =>
      /@opentelemetry/.test(u) ||
      /^(toDebugSpan|redactAttributes|inSpan|shouldSample|observe|endpointKeyOf|keepProbabilityOf|traceRandomness|withEventTraceContext|traceMetadata)$/.test(
        f,
      ) ||
      (/^(onStart|onEnd)$/.test(f) && /embedded\/main/.test(u)),
  ],
  ['ETag: sha1 of the body', (f, u) => /crypto\/hash/.test(u) && f !== 'Hmac'],
  [
    'JSON serialisation of the answer',
    (f) => /^(sendJsonConditionally|sendJsonTextConditionally|historyJson|itemText|stringify|json)$/.test(f),
  ],
  [
    'read-model query (memory store: filter, sort, clone)',
    (f) => /^(cloneData|matches|select|fieldOf|compare|find|sortBy|matchesCondition)$/.test(f),
  ],
  ['list shaping (listHistory, toItem, next link)', (f) => /^(listHistory|toItem|nextQuery|selection)$/.test(f)],
  ['zod: query validation', (f, u) => /zod/.test(u) || f === 'parseInput'],
  ['JWT: authenticate (cache hit)', (f, u) => f === 'authenticate' || /jose/.test(u)],
  ['request context, access log, request id', (f, u) => /pino/.test(u) || /^(requestContext|randomUUID)$/.test(f)],
  [
    'Express: routing, middleware, req/res helpers (gateway + service)',
    (f, u) =>
      /node_modules\/(express|router|body-parser|finalhandler|send|on-finished|type-is|content-type|qs|parseurl|path-to-regexp|depd|fresh|mime|accepts|negotiator|vary|encodeurl|escape-html|statuses|http-errors|setprototypeof|forwarded|proxy-addr|media-typer|raw-body|iconv)/.test(
        u,
      ) || /node:querystring/.test(u),
  ],
  [
    'node http: parse, headers, response writes',
    (f, u) => /node:_http|node:http/.test(u) || /^(parserOnHeadersComplete|parserOnIncoming|parserOnBody|parserOnMessageComplete)$/.test(f),
  ],
  ['sockets: writev and streams', (f, u) => f === 'writev' || /node:net|node:stream|node:internal\/streams|stream_base_commons/.test(u)],
  ['other app code (gateway, http-kit, routes)', (f, u) => /embedded\/main\.js/.test(u)],
  [
    'promises, ticks, event loop',
    (f, u) => /task_queues|async_hooks|node:internal\/timers/.test(u) || /runMicrotasks|processTicksAndRejections/.test(f),
  ],
  ['(program) / native', (f) => f === '(program)' || f === '(root)'],
];
const totals = new Map();
const dt = new Map();
for (let i = 0; i < p.samples.length; i++) dt.set(i, p.timeDeltas[i + 1] ?? 0);
// Only the load window: from the first to the last sample inside the call tree of the route's query (a third
// argument names another function, e.g. `add` for the POST route of `WRITES=1 bench/profile.mjs`).
const windowFunction = process.argv[4] ?? 'listHistory';
const inList = (id) => {
  for (let x = id; x !== undefined; x = parent.get(x)) if (byId.get(x).callFrame.functionName === windowFunction) return true;
  return false;
};
let first = -1,
  last = -1;
for (let i = 0; i < p.samples.length; i++)
  if (inList(p.samples[i])) {
    if (first < 0) first = i;
    last = i;
  }
for (let i = first; i <= last; i++) {
  let id = p.samples[i];
  let layer = 'other';
  while (id !== undefined) {
    const n = byId.get(id);
    const f = n.callFrame.functionName;
    const u = n.callFrame.url;
    const hit = rules.find(([, test]) => test(f, u));
    if (hit) {
      layer = hit[0];
      break;
    }
    id = parent.get(id);
  }
  totals.set(layer, (totals.get(layer) ?? 0) + dt.get(i));
}
const busy = [...totals].filter(([l]) => l !== 'idle').reduce((a, [, v]) => a + v, 0);
console.log(`| layer | µs per request | share of busy CPU |`);
console.log(`|---|---|---|`);
for (const [layer, us] of [...totals].sort((a, b) => b[1] - a[1])) {
  if (layer === 'idle') continue;
  console.log(`| ${layer} | ${(us / requests).toFixed(0)} | ${((100 * us) / busy).toFixed(0)}% |`);
}
console.log(`| **busy CPU in all** | **${(busy / requests).toFixed(0)}** | |`);
console.log(`idle ${(totals.get('idle') / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s, ${requests} requests`);
