#!/usr/bin/env node
// The MongoDB-wire store alone, from one client (the mongodb driver in node_modules), on loopback: what every figure of
// the distributed mode is set against. Documents the size of a history read model's, bounded loops.
//   MONGO_URL=mongodb://127.0.0.1:27018/ node bench/store.mjs [--docs=2000] [--batch=100] [--concurrency=8]
// Prints one line per figure: single writes in sequence (one round trip each), the same with `concurrency` in flight,
// bulk writes of `batch`, reads by _id in sequence and in flight, and a checkpoint's conditional update.
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { MongoClient } from 'mongodb';

const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const DOCS = arg('docs', 2000);
const BATCH = arg('batch', 100);
const CONCURRENCY = arg('concurrency', 8);
const url = process.env.MONGO_URL;
if (!url) throw new Error('MONGO_URL is not set (run through tools/servers/with-servers.sh)');

const client = new MongoClient(url, { maxPoolSize: CONCURRENCY + 2 });
await client.connect();
const db = client.db(`store_bench_${randomUUID().slice(0, 8)}`);
const docs = db.collection('docs');
await docs.createIndex({ userId: 1, revision: 1 });

const doc = (i, revision = 1) => ({
  _id: `user-${i % 1000}/entry-${i}`,
  userId: `user-${i % 1000}`,
  revision,
  itemId: `item-${i}`,
  title: 'A programme of about this size, as a history entry carries',
  progress: i % 100,
  watchedAt: 1_760_000_000_000 + i,
});

async function timed(label, n, work) {
  const start = process.hrtime.bigint();
  await work();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const perSecond = Math.round((n / ms) * 1000);
  console.log(
    `${label.padEnd(44)} ${String(perSecond).padStart(7)} docs/s  (${n} in ${ms.toFixed(0)} ms, load ${loadavg()[0].toFixed(1)})`,
  );
  return perSecond;
}

async function inFlight(n, one) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

const results = {};
try {
  results.upsertSequential = await timed('write, one at a time (conditional upsert)', DOCS, async () => {
    for (let i = 0; i < DOCS; i++) await docs.replaceOne({ _id: doc(i)._id }, doc(i), { upsert: true });
  });
  results.upsertInFlight = await timed(`write, ${CONCURRENCY} in flight`, DOCS, () =>
    inFlight(DOCS, (i) => docs.replaceOne({ _id: doc(DOCS + i)._id }, doc(DOCS + i), { upsert: true })),
  );
  results.bulk = await timed(`write, bulk of ${BATCH} (ordered)`, DOCS, async () => {
    for (let i = 0; i < DOCS; i += BATCH) {
      const ops = Array.from({ length: Math.min(BATCH, DOCS - i) }, (_, k) => {
        const d = doc(2 * DOCS + i + k);
        return { replaceOne: { filter: { _id: d._id }, replacement: d, upsert: true } };
      });
      await docs.bulkWrite(ops, { ordered: true });
    }
  });
  results.readSequential = await timed('read by _id, one at a time', DOCS, async () => {
    for (let i = 0; i < DOCS; i++) await docs.findOne({ _id: doc(i)._id });
  });
  results.readInFlight = await timed(`read by _id, ${CONCURRENCY} in flight`, DOCS, () =>
    inFlight(DOCS, (i) => docs.findOne({ _id: doc(i)._id })),
  );
  results.readMany = await timed(`read by _id, $in of ${BATCH}`, DOCS, async () => {
    for (let i = 0; i < DOCS; i += BATCH) {
      const ids = Array.from({ length: Math.min(BATCH, DOCS - i) }, (_, k) => doc(i + k)._id);
      await docs.find({ _id: { $in: ids } }).toArray();
    }
  });
  const checkpoints = db.collection('checkpoints');
  await checkpoints.insertOne({ _id: 'p/segment/0', owner: 'me', position: '0' });
  results.checkpoint = await timed('checkpoint (updateOne with owner guard)', DOCS, async () => {
    for (let i = 0; i < DOCS; i++) await checkpoints.updateOne({ _id: 'p/segment/0', owner: 'me' }, { $set: { position: String(i) } });
  });
  console.log(JSON.stringify({ store: url.replace(/\/\/[^@]*@/, '//'), docs: DOCS, batch: BATCH, concurrency: CONCURRENCY, ...results }));
} finally {
  await db.dropDatabase().catch(() => undefined);
  await client.close();
}
