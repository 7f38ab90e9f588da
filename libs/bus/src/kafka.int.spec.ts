import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startMetrics, stopMetrics } from '@udp/telemetry';
import { collectingReader, containersUnavailable, reportSkipped, waitUntil } from '@udp/test-kit';
import { busContract } from './bus.contract';
import { KafkaBus } from './kafka';
import type { Bus, ReceivedMessage } from './port';

/**
 * KAFKA_BROKERS (CI: a real Apache Kafka on loopback) or a Kafka testcontainer where Docker runs; else skipped.
 * Everything that needs a broker lives in this one file on purpose: its tests run one after the other, so the
 * broker restart at the end cannot hit another suite's test (jest runs separate files in parallel workers).
 */
const brokers = process.env.KAFKA_BROKERS;
const restartScript = process.env.KAFKA_RESTART_SCRIPT;
jest.setTimeout(120_000);

const unavailable = brokers ? null : containersUnavailable();
const root = join(__dirname, '..', '..', '..');
/** The broker accepts session timeouts from group.min.session.timeout.ms, 6000 by default. */
const SESSION_TIMEOUT_MS = 6000;

if (unavailable) {
  reportSkipped('Bus contract: kafka', `KAFKA_BROKERS is unset and ${unavailable}`);
} else {
  let list = brokers?.split(',') ?? [];
  let container: { stop(): Promise<unknown> } | null = null;
  beforeAll(async () => {
    if (brokers) return;
    const { KafkaContainer } = await import('@testcontainers/kafka');
    const started = await new KafkaContainer('confluentinc/cp-kafka:7.7.1').withKraft().start();
    container = started;
    list = [`${started.getHost()}:${started.getMappedPort(9093)}`];
  }, 180_000);
  afterAll(async () => {
    await container?.stop();
  });
  busContract('kafka', async () => new KafkaBus(list, `contract-${process.pid}`), 60_000);

  describe('KafkaBus: consumer lag (udp.kafka.consumer.lag)', () => {
    const collected = collectingReader();
    beforeAll(() => startMetrics({ serviceName: 'bus-lag-test', readers: [collected.reader] }));
    afterAll(() => stopMetrics());

    it("reports the messages on the member's partitions that its group has not committed, and 0 once handled", async () => {
      // Given a consumer that holds its first message, and 6 messages published
      const bus = new KafkaBus(list, `lag-${process.pid}`);
      const topic = `lag-${randomUUID()}`;
      const group = `lag-group-${randomUUID()}`;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const handled: string[] = [];
      await bus.subscribe(topic, group, async (m) => {
        if (handled.length === 0) await held;
        handled.push(m.key);
      });
      await bus.publish(
        topic,
        [1, 2, 3, 4, 5, 6].map((n) => ({ key: `k${n}`, value: { n } })),
      );
      const lag = async () =>
        (await collected.points('udp.kafka.consumer.lag')).find((p) => p.attributes['messaging.consumer.group.name'] === group);

      // Then its lag counts the uncommitted messages (the one held and those behind it on its partitions), named by group and topic
      await waitUntil(async () => ((await lag())?.value ?? 0) >= 1, 30_000, 'a lag while a message is held');
      expect((await lag())!.attributes).toMatchObject({ 'messaging.destination.name': topic, 'udp.service': `lag-${process.pid}` });
      // And once every message is handled and committed, it is 0
      release();
      await waitUntil(() => handled.length === 6, 30_000, 'every message handled');
      await waitUntil(async () => (await lag())?.value === 0, 30_000, 'no lag once committed');
      await bus.close();
    });
  });

  describe('KafkaBus: the trace of a message handed over by a key filter', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    beforeAll(() => {
      trace.setGlobalTracerProvider(provider);
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    });
    afterAll(async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    });

    it("continues the publisher's trace in a CONSUMER span for the messages handed over, and makes none for the others", async () => {
      // Given a consumer that takes the key `ann` only, and two messages published in one trace
      const bus = new KafkaBus(list, `keyed-trace-${process.pid}`);
      const topic = `keyed-trace-${randomUUID()}`;
      const activeIn: Array<string | undefined> = [];
      const asked: string[] = [];
      const keys = (key: string) => {
        asked.push(key);
        return key === 'ann';
      };
      await bus.subscribe(topic, `g-${randomUUID()}`, async () => void activeIn.push(trace.getActiveSpan()?.spanContext().spanId), {
        keys,
      });
      const publisher = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 };
      const headers: Record<string, string> = {};
      propagation.inject(trace.setSpanContext(context.active(), publisher), headers);
      await bus.publish(topic, [
        { key: 'bob', value: { n: 1 }, headers },
        { key: 'ann', value: { n: 2 }, headers },
      ]);

      // When both are read
      await waitUntil(() => asked.length === 2 && activeIn.length === 1, 30_000, 'both messages read');
      await waitUntil(() => exporter.getFinishedSpans().length >= 1, 5_000, 'the span ended');

      // Then one span: `process <topic>`, a CONSUMER child of the publisher's span, active while the handler ran
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => [s.name, s.kind, s.spanContext().traceId, s.parentSpanContext?.spanId])).toEqual([
        [`process ${topic}`, SpanKind.CONSUMER, publisher.traceId, publisher.spanId],
      ]);
      expect(activeIn).toEqual([spans[0].spanContext().spanId]);
      await bus.close();
    });
  });

  describe('KafkaBus: a consumer that dies before committing', () => {
    // The bundle keeps node_modules external, so it must live inside the repo to find kafkajs (tmp/ is ignored).
    const distDir = join(root, 'tmp', `bus-crash-${process.pid}`);
    const childJs = join(distDir, 'kafka.crash-child.js');
    let bus: Bus;
    let child: ChildProcess | null = null;

    beforeAll(() => {
      const { buildSync } = require('esbuild') as typeof import('esbuild');
      buildSync({
        entryPoints: [join(__dirname, 'kafka.crash-child.ts')],
        bundle: true,
        platform: 'node',
        packages: 'external',
        tsconfig: join(root, 'tsconfig.base.json'),
        outfile: childJs,
        logLevel: 'warning',
      });
      bus = new KafkaBus(list, `crash-${process.pid}`, { sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: 1000 });
    });
    afterAll(async () => {
      child?.kill('SIGKILL');
      await bus?.close();
      rmSync(distDir, { recursive: true, force: true });
    });

    it('redelivers the message to the group after the member holding it is killed with SIGKILL', async () => {
      const topic = `crash.${randomUUID()}`;
      const group = 'g-crash';
      await bus.publish(topic, [{ key: 'order-7', value: { n: 7, text: 'é' }, headers: { 'event-id': 'e7' } }]);

      const started = Date.now();
      child = spawn(process.execPath, [childJs, topic, group], {
        cwd: root,
        env: { ...process.env, KAFKA_BROKERS: list.join(','), SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const proc = child;
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code)));
      const inChild = await new Promise<ReceivedMessage>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`child reported nothing within 30 s: ${out}`)), 30_000);
        proc.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split('\n').find((l) => l.startsWith('{"received"'));
          if (line) {
            clearTimeout(timer);
            resolve((JSON.parse(line) as { received: ReceivedMessage }).received);
          }
        });
        proc.once('exit', (code) => reject(new Error(`child exited early (${code}): ${out}`)));
      });
      const receivedAt = Date.now();
      proc.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      child = null;

      const again: ReceivedMessage[] = [];
      await bus.subscribe(topic, group, async (m) => void again.push(m));
      // The coordinator hands the partition over once the dead member's session has expired.
      await waitUntil(() => again.length > 0, 30_000, 'redelivery to the surviving group');
      console.log(
        `[bus] crash redelivery: child received after ${receivedAt - started} ms, ` +
          `redelivered ${Date.now() - receivedAt} ms after SIGKILL (session timeout ${SESSION_TIMEOUT_MS} ms)`,
      );
      expect(again[0]).toEqual(inChild);
      expect(again[0]).toMatchObject({ topic, key: 'order-7', value: { n: 7, text: 'é' }, headers: { 'event-id': 'e7' } });
    }, 60_000);
  });

  if (!restartScript) {
    reportSkipped('KafkaBus: broker restart', 'KAFKA_RESTART_SCRIPT is unset (tools/servers/with-servers.sh sets it)');
  } else {
    describe('KafkaBus: closed while the broker is away', () => {
      const broker = (action: 'stop' | 'start') =>
        new Promise<void>((resolve, reject) => {
          execFile('bash', [restartScript, action], { timeout: 90_000 }, (err, _out, stderr) => {
            process.stderr.write(stderr);
            if (err) reject(new Error(`broker ${action} failed: ${err.message}`));
            else resolve();
          });
        });
      const port = Number(list[0]!.split(':').pop());
      /** This process's connections to the broker (no other client is open while this test runs). */
      const brokerSockets = () =>
        (process as unknown as { _getActiveHandles(): Array<{ localPort?: number; remotePort?: number }> })
          ._getActiveHandles()
          .filter((h) => h.remotePort === port)
          .map((h) => `connection from port ${h.localPort} to the broker`);
      const kafkaLog = jest.spyOn(console, 'error');
      afterAll(() => kafkaLog.mockRestore());
      afterAll(() => broker('start'));

      // CI saw a jest run that never exited: a consumer closed while kafkajs was restarting it after a crash (the
      // broker restart) connected again, and held a connection for good.
      it('leaves no connection and no group member behind when closed while its consumer reconnects', async () => {
        const topic = `away.${randomUUID()}`;
        const group = `g-away-${randomUUID()}`;
        const clientId = `away-${process.pid}`;
        const bus = new KafkaBus(list, clientId, { sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: 1000 });
        const got: number[] = [];
        await bus.subscribe(topic, group, async (m) => void got.push(m.value.n as number));
        await bus.publish(topic, [{ key: 'k', value: { n: 1 } }]);
        await waitUntil(() => got.length === 1, 30_000, 'a delivery before the broker stops');

        // When the broker goes away, the consumer crashes, and a new attempt to connect is under way
        await broker('stop');
        // (kafkajs's own log lines: a crash names the group; after it, only a new connection attempt fails to reach
        // the seed broker, the crashed consumer's leaving fails otherwise; this bus is the only client at work)
        const logged = (text: string) => (line: unknown[]) => String(line[0]).includes(text);
        await waitUntil(
          () => kafkaLog.mock.calls.some((line) => logged('[Consumer] Crash')(line) && logged(group)(line)),
          60_000,
          'a crash',
        );
        const crashes = kafkaLog.mock.calls.length;
        await waitUntil(
          () => kafkaLog.mock.calls.slice(crashes).some(logged('Failed to connect to seed broker')),
          60_000,
          'a new attempt to connect after the crash',
        );
        // And the bus is closed then, and the broker comes back
        await bus.close();
        expect(brokerSockets()).toEqual([]);
        await broker('start');

        // Then nothing of the closed bus connects again: watched for longer than a reconnecting consumer takes
        // (its attempts are at most 2 s apart) and than the group's old member's session (6 s).
        const until = Date.now() + 15_000;
        while (Date.now() < until) {
          expect(brokerSockets()).toEqual([]);
          await new Promise((r) => setTimeout(r, 250));
        }
        const { Kafka, logLevel } = require('kafkajs') as typeof import('kafkajs');
        const admin = new Kafka({ clientId: 'away-check', brokers: list, logLevel: logLevel.NOTHING }).admin();
        await admin.connect();
        try {
          const { groups } = await admin.describeGroups([group]);
          expect(groups[0]!.members.map((m) => m.clientId)).toEqual([]);
        } finally {
          await admin.disconnect();
        }
      }, 180_000);
    });

    describe('KafkaBus: broker restart', () => {
      const N = 60;
      let bus: Bus;
      beforeAll(() => {
        // After the restart the live consumer rejoins its group as a new member, and the coordinator (which
        // reloaded the group) waits for the old member's session to expire first: 30 s with kafkajs' default.
        bus = new KafkaBus(list, `restart-${process.pid}`, { sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: 1000 });
      });
      afterAll(async () => {
        await bus?.close();
      });

      const restartBroker = () =>
        new Promise<void>((resolve, reject) => {
          // Asynchronous, so the subscribed consumer keeps running (and sees the broker go away) meanwhile.
          const proc = execFile('bash', [restartScript], { timeout: 90_000, killSignal: 'SIGTERM' }, (err, _out, stderr) => {
            process.stderr.write(stderr);
            if (err) reject(new Error(`restart script failed: ${err.message}`));
            else resolve();
          });
          proc.stdin?.end();
        });

      it('loses no acknowledged message across a broker restart, and a live consumer carries on', async () => {
        const topic = `restart.${randomUUID()}`;
        const message = (n: number) => ({ key: `user-${n % 7}`, value: { n } });
        const live: number[] = [];
        await bus.subscribe(topic, 'g-live', async (m) => void live.push(m.value.n as number));

        for (let n = 0; n < N; n += 10)
          await bus.publish(
            topic,
            Array.from({ length: 10 }, (_, i) => message(n + i)),
          );
        await waitUntil(() => new Set(live).size === N, 30_000, 'live consumer: messages before the restart');

        const t0 = Date.now();
        await restartBroker();
        const restartMs = Date.now() - t0;

        const t1 = Date.now();
        for (let n = N; n < 2 * N; n += 10)
          await bus.publish(
            topic,
            Array.from({ length: 10 }, (_, i) => message(n + i)),
          );
        const publishMs = Date.now() - t1;

        const all = Array.from({ length: 2 * N }, (_, n) => n);
        const missingFrom = (got: number[]) => all.filter((n) => !got.includes(n));
        const duplicatesIn = (got: number[]) => got.length - new Set(got).size;

        await waitUntil(() => missingFrom(live).length === 0, 60_000, 'live consumer: messages after the restart').catch((err: Error) => {
          throw new Error(`${err.message}; missing ${JSON.stringify(missingFrom(live))}`);
        });
        const liveMs = Date.now() - t1;
        const t2 = Date.now();
        const fresh: number[] = [];
        await bus.subscribe(topic, 'g-after', async (m) => void fresh.push(m.value.n as number));
        await waitUntil(() => missingFrom(fresh).length === 0, 30_000, 'new group: all messages').catch((err: Error) => {
          throw new Error(`${err.message}; missing ${JSON.stringify(missingFrom(fresh))}`);
        });

        console.log(
          `[bus] broker restart: restart script ${restartMs} ms, ${N} publishes after it ${publishMs} ms, ` +
            `live consumer caught up ${liveMs} ms after the restart, new group read all in ${Date.now() - t2} ms; ` +
            `live consumer ${live.length} deliveries (${duplicatesIn(live)} duplicates), ` +
            `new group ${fresh.length} deliveries (${duplicatesIn(fresh)} duplicates)`,
        );
        expect(missingFrom(live)).toEqual([]);
        expect(missingFrom(fresh)).toEqual([]);
      }, 120_000);
    });
  }
}
