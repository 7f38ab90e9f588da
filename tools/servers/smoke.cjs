#!/usr/bin/env node
// Smoke test for the servers started by tools/servers/with-servers.sh:
// produces and consumes one Kafka message and writes/reads one Mongo document.
//
//   tools/servers/with-servers.sh node tools/servers/smoke.cjs
//
// Needs KAFKA_BROKERS and MONGO_URL (set by with-servers.sh) and the kafkajs and
// mongodb packages from the repo's node_modules.
'use strict';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const { Kafka, logLevel } = require('kafkajs');
const { MongoClient } = require('mongodb');

const brokers = (process.env.KAFKA_BROKERS || '').split(',').filter(Boolean);
const mongoUrl = process.env.MONGO_URL;
if (brokers.length === 0 || !mongoUrl) {
  console.error('smoke: KAFKA_BROKERS and MONGO_URL must be set (run me through with-servers.sh)');
  process.exit(2);
}

const TIMEOUT_MS = 60_000;
const suffix = `${Date.now()}-${process.pid}`;

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function kafkaRoundTrip() {
  const kafka = new Kafka({ clientId: 'smoke', brokers, logLevel: logLevel.WARN });
  const topic = `smoke-${suffix}`;
  const value = `hello ${suffix}`;

  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();

  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ key: 'k', value }] });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `smoke-${suffix}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await withTimeout(
      new Promise((resolve, reject) => {
        consumer.run({ eachMessage: async ({ message }) => resolve(message.value.toString()) }).catch(reject);
      }),
      'kafka consume',
    );
    if (received !== value) throw new Error(`kafka: expected ${JSON.stringify(value)}, got ${JSON.stringify(received)}`);
  } finally {
    await consumer.disconnect();
  }
  return `kafka ok: ${topic} -> ${JSON.stringify(value)}`;
}

async function mongoRoundTrip() {
  const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 10_000 });
  await client.connect();
  const dbName = `smoke_${suffix.replace(/-/g, '_')}`;
  try {
    const coll = client.db(dbName).collection('docs');
    const doc = { _id: suffix, n: 42, tags: ['a', 'b'], at: new Date() };
    await coll.insertOne(doc);
    const got = await coll.findOne({ _id: suffix });
    if (!got || got.n !== 42 || got.tags.join() !== 'a,b') {
      throw new Error(`mongo: read back ${JSON.stringify(got)}`);
    }
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
  return `mongo ok: ${dbName}.docs round-trip`;
}

(async () => {
  const t0 = Date.now();
  const results = await Promise.all([kafkaRoundTrip(), mongoRoundTrip()]);
  for (const r of results) console.log(`smoke: ${r}`);
  console.log(`smoke: done in ${Date.now() - t0} ms`);
})().catch((err) => {
  console.error('smoke: FAILED:', err && err.stack ? err.stack : err);
  process.exit(1);
});
