/**
 * Child process for the Kafka redelivery test (kafka.int.spec.ts), bundled and run with node:
 *   node child.js <topic> <groupId>     (KAFKA_BROKERS, SESSION_TIMEOUT_MS from the environment)
 * Subscribes with the real KafkaBus, prints each received message as one JSON line on stdout, and then
 * never returns from the handler, so its offset is never committed. The test kills it with SIGKILL.
 */
import { KafkaBus } from './kafka';

const [topic, groupId] = process.argv.slice(2);
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
if (!topic || !groupId || brokers.length === 0) {
  process.stderr.write('usage: KAFKA_BROKERS=host:port node child.js <topic> <groupId>\n');
  process.exit(2);
}
const sessionTimeoutMs = Number(process.env.SESSION_TIMEOUT_MS ?? 6000);
const bus = new KafkaBus(brokers, `crash-child-${process.pid}`, {
  sessionTimeoutMs,
  heartbeatIntervalMs: Math.floor(sessionTimeoutMs / 6),
});

bus
  .subscribe(topic, groupId, async (message) => {
    process.stdout.write(`${JSON.stringify({ received: message })}\n`);
    await new Promise(() => undefined); // hang: the offset stays uncommitted until the process dies
  })
  .catch((err: unknown) => {
    process.stderr.write(`crash-child: subscribe failed: ${String(err)}\n`);
    process.exit(1);
  });
