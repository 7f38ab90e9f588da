import { mongoKafkaBackends, postgresKafkaBackends } from '@udp/test-system';
import { reportSkipped } from '@udp/test-kit';
import { profileErasureSuite } from './erasure.scenario';

/** The erasure scenario on MongoDB read models (FerretDB in CI) and Kafka: where MONGO_URL and KAFKA_BROKERS are set. */
const mongoUrl = process.env.MONGO_URL;
const brokers = process.env.KAFKA_BROKERS?.split(',');
jest.setTimeout(120_000);

if (!mongoUrl || !brokers)
  reportSkipped(
    'profile-svc erasure on MongoDB and Kafka',
    'MONGO_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)',
  );
// Each in a describe of its own: a suite's fixture (its service, on the shared Kafka) is then up for its tests only.
else describe('on MongoDB', () => profileErasureSuite('MongoDB, Kafka', () => mongoKafkaBackends('profile-svc', mongoUrl, brokers)));

/** The same on PostgreSQL read models (sealed: docs/erasure.md, "PostgreSQL"): where POSTGRES_URL and KAFKA_BROKERS are set. */
const postgresUrl = process.env.POSTGRES_URL;
if (!postgresUrl || !brokers)
  reportSkipped(
    'profile-svc erasure on PostgreSQL and Kafka',
    'POSTGRES_URL and KAFKA_BROKERS must both be set (bash tools/servers/with-servers.sh npm test)',
  );
else
  describe('on PostgreSQL', () =>
    profileErasureSuite('PostgreSQL, Kafka', () => postgresKafkaBackends('profile-svc', postgresUrl, brokers)));
