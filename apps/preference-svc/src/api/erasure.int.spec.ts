import { mongoKafkaBackends } from '@udp/test-system';
import { reportSkipped } from '@udp/test-kit';
import { preferenceErasureSuite } from './erasure.scenario';

/** The erasure scenario on MongoDB read models (FerretDB in CI) and Kafka: where MONGO_URL and KAFKA_BROKERS are set. */
const mongoUrl = process.env.MONGO_URL;
const brokers = process.env.KAFKA_BROKERS?.split(',');
jest.setTimeout(120_000);

if (!mongoUrl || !brokers)
  reportSkipped(
    'preference-svc erasure on MongoDB and Kafka',
    'MONGO_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)',
  );
else preferenceErasureSuite('MongoDB, Kafka', () => mongoKafkaBackends('preference-svc', mongoUrl, brokers));
