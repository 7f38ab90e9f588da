import { containersUnavailable, reportSkipped } from '@udp/testing';
import { busContract } from './bus.contract';
import { KafkaBus } from './kafka';

/** KAFKA_BROKERS (CI: a real Apache Kafka on loopback) or a Kafka testcontainer where Docker runs; else skipped. */
const brokers = process.env.KAFKA_BROKERS;
jest.setTimeout(120_000);

const unavailable = brokers ? null : containersUnavailable();

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
}
