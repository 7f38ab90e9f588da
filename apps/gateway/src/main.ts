import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { RequestHandler } from 'express';
import { Authenticator, DEV_ISSUER, InternalIdentity, fileSecret } from '@udp/auth';
import { type Bus, InProcessBus, KafkaBus } from '@udp/bus';
import { loadConfig } from '@udp/config';
import type { InternalReads } from '@udp/http-kit';
import {
  ChangeHub,
  CursorCodec,
  type ErasureEpochRow,
  ErasureHolds,
  LocalRedeemedTickets,
  SharedRedeemedTickets,
  SharedStreamRegistry,
  TicketIssuer,
  changesRouter,
  changesStream,
  createGateway,
  httpServiceGet,
  inProcessServiceGet,
  perUserLimit,
  type ServiceRoute,
} from '@udp/gateway-core';
import { loadCodopsSecrets, loadPersonalisationConfig, personalisationRouter } from '@udp/personalisation';
import { SqliteReadModelStore } from '@udp/readmodel';
import { closeServer, listen, openSharedReadModels, serverLimitsOf } from '@udp/runtime';
import { createLogger, markPublicEdge, parseTrustedCallers, setTracingOptOut, startTelemetry } from '@udp/telemetry';
import { gatewayConfigSchema } from './config';

const SERVICE = 'gateway';

/**
 * Wiring only: configuration in, the gateway out on its port. `shared.inProcess` maps a service URL to its
 * handler when that service runs in this process (the embedded host), so requests skip the HTTP hop; `shared.internal`
 * its internal reads (live sync's pulls).
 */
export async function start(
  env: NodeJS.ProcessEnv = process.env,
  shared: { inProcess?: Record<string, RequestHandler>; internal?: Record<string, InternalReads>; bus?: Bus } = {},
) {
  const config = loadConfig(gatewayConfigSchema, env);
  const trustedCallers = parseTrustedCallers(config.TRACE_TRUSTED_CALLERS);
  const limits = {
    ...serverLimitsOf(config),
    maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    maxConnectionsPerProxy: config.HTTP_MAX_CONNECTIONS_PER_PROXY,
  };
  startTelemetry({ serviceName: SERVICE, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  const dataDir = resolve(config.DATA_DIR);
  const devMode = !config.AUTH_JWT_SECRET && !config.AUTH_JWKS_URL;
  const authenticator = new Authenticator({
    jwtSecret: config.AUTH_JWKS_URL ? undefined : (config.AUTH_JWT_SECRET ?? fileSecret(dataDir, 'jwt-signing')),
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_JWT_ISSUER ?? (devMode ? DEV_ISSUER : undefined),
    audience: config.AUTH_JWT_AUDIENCE,
    userinfoUrl: config.AUTH_USERINFO_URL,
    userinfoIdField: config.AUTH_USERINFO_ID_FIELD,
    maxTokenLifetimeS: config.AUTH_MAX_TOKEN_LIFETIME_S,
  });
  const identity = new InternalIdentity(config.INTERNAL_AUTH_SECRET ?? fileSecret(dataDir, 'internal-identity'));
  const routes: ServiceRoute[] = [
    { name: 'history-svc', prefixes: ['/api/history'], url: config.HISTORY_SVC_URL },
    { name: 'playlist-svc', prefixes: ['/api/playlist'], url: config.PLAYLIST_SVC_URL },
    { name: 'preference-svc', prefixes: ['/api/preference'], url: config.PREFERENCE_SVC_URL },
    { name: 'profile-svc', prefixes: ['/api/profile'], url: config.PROFILE_SVC_URL },
    // The QC item catalogue is public and read-only: no credentials.
    { name: 'catalogue-svc', prefixes: ['/api/v2/items', '/api/v2/icons'], url: config.CATALOGUE_SVC_URL, public: true },
    // An export's public address is a capability (its key): no credentials. Listed before /api/data, which needs them.
    { name: 'export-worker', prefixes: ['/api/data/export/public'], url: config.EXPORT_WORKER_URL, public: true },
    { name: 'export-worker', prefixes: ['/api/data'], url: config.EXPORT_WORKER_URL },
  ];
  // Live sync: the change notifications of the in-process bus (embedded) or Kafka, with a consumer of this process's own.
  // A bus made here is closed here (the embedded host's shared one is the host's to close).
  const ownBus = config.KAFKA_BROKERS ? new KafkaBus(config.KAFKA_BROKERS, SERVICE) : shared.bus ? undefined : new InProcessBus();
  const bus = ownBus ?? shared.bus!;
  const cursors = new CursorCodec(identity.derivedKey('changes-cursor'));
  // The gateway replicas' shared store (READMODEL_URL, else MONGO_URL): live-sync streams, tickets, erasure epochs.
  const replicasStore = (await openSharedReadModels(config, 'gateway')) ?? undefined;
  // The erasure boundary: held users, and each erased user's epoch, kept where the replicas share them (MongoDB) or in
  // a file of this process's own under DATA_DIR.
  const epochStore = replicasStore ?? (await SqliteReadModelStore.open({ file: resolve(dataDir, 'gateway', 'erasure-epochs.sqlite') }));
  const erasureHolds = new ErasureHolds({
    bus,
    epochs: epochStore.collection<ErasureEpochRow>('erasure_epochs'),
    key: identity.derivedKey('erasure-epochs'),
    logger,
    holdMs: config.ERASURE_HOLD_S * 1000,
  });
  await erasureHolds.start();
  const userLimit = config.RATE_LIMIT_PER_USER
    ? perUserLimit({ windowS: config.RATE_LIMIT_WINDOW_S, perUser: config.RATE_LIMIT_PER_USER, perAddress: 0 })
    : undefined;
  const personalisation = loadPersonalisationConfig(env);
  // Traces of an opted-out codops are not recorded at all: nothing exported, an empty debug block.
  setTracingOptOut((key) => {
    const [, api, version, codops] = key.split('/');
    return (
      api === 'api' && version === 'v1' && Object.hasOwn(personalisation.codops, codops) && personalisation.codops[codops].tracing === false
    );
  });
  const personalisationRoutes = personalisationRouter({
    config: personalisation,
    secrets: loadCodopsSecrets(Object.keys(personalisation.codops), env, dataDir),
    services: { history: config.HISTORY_SVC_URL, playlist: config.PLAYLIST_SVC_URL },
    identity,
    authenticator,
    erasureHeld: erasureHolds.refusal,
  });
  const changes = new ChangeHub({
    bus,
    historyUrl: config.HISTORY_SVC_URL,
    playlistUrl: config.PLAYLIST_SVC_URL,
    preferenceUrl: config.PREFERENCE_SVC_URL,
    profileUrl: config.PROFILE_SVC_URL,
    identity,
    // The services this process runs (embedded) are read in process: no request, no loopback hop per pull.
    serviceGet: shared.internal ? inProcessServiceGet(shared.internal, httpServiceGet(identity)) : undefined,
    cursors,
    logger,
    limits: {
      heartbeatS: config.CHANGES_HEARTBEAT_S,
      maxStreamsPerUser: config.CHANGES_MAX_STREAMS_PER_USER,
      maxStreams: config.CHANGES_MAX_STREAMS,
      maxBufferBytes: config.CHANGES_MAX_BUFFER_BYTES,
      maxCatchUp: config.CHANGES_MAX_CATCHUP,
    },
    holds: erasureHolds,
    charge: userLimit?.charge,
    registry:
      replicasStore &&
      new SharedStreamRegistry({
        store: replicasStore,
        bus,
        replica: randomBytes(8).toString('hex'),
        maxStreamsPerUser: config.CHANGES_MAX_STREAMS_PER_USER,
        logger,
      }),
  });
  await changes.start();
  // Replicas share the redeemed tickets (a ticket is good once, not once per replica) and the count of each user's
  // streams in MongoDB; one process keeps them itself.
  const tickets = new TicketIssuer(identity.derivedKey('changes-ticket'), {
    redeemed: replicasStore ? new SharedRedeemedTickets(replicasStore) : new LocalRedeemedTickets(config.CHANGES_MAX_TICKETS),
  });
  const app = createGateway({
    routers: [personalisationRoutes, changesRouter({ hub: changes, tickets, cursors, authenticator })],
    streams: [changesStream({ hub: changes, tickets, cursors, authenticator })],
    authenticator,
    identity,
    logger,
    userLimit,
    erasureHolds,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    trustedProxies: config.TRUSTED_PROXIES,
    corsOrigins: config.CORS_ORIGINS,
    rateLimits: {
      windowS: config.RATE_LIMIT_WINDOW_S,
      perUser: config.RATE_LIMIT_PER_USER,
      perAddress: config.RATE_LIMIT_PER_ADDRESS,
      erasurePerUser: config.RATE_LIMIT_ERASURE_PER_USER,
    },
    routes: routes.map((route) => ({ ...route, handler: shared.inProcess?.[route.url] })),
  });
  const { server, port } = await listen(app, config.PORT ?? 8080, config.HOST, limits, logger);
  // The public edge: a caller's trace context is continued only from TRACE_TRUSTED_CALLERS.
  markPublicEdge(server, trustedCallers);
  logger.info({ port, auth: devMode ? 'embedded dev secret' : config.AUTH_JWKS_URL ? 'jwks' : 'shared secret' }, `${SERVICE} listening`);
  return {
    port,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // Streams first (each gets `close`, `shutdown`): the server would otherwise wait for them to end.
    async stop() {
      await changes.stop();
      await erasureHolds.stop();
      await closeServer(server);
      await ownBus?.close();
      await tickets.close();
      await epochStore.close();
    },
  };
}
