import { resolve } from 'node:path';
import type { RequestHandler } from 'express';
import { Authenticator, DEV_ISSUER, InternalIdentity, fileSecret } from '@udp/auth';
import { loadConfig } from '@udp/config';
import { createGateway, type ServiceRoute } from '@udp/gateway-core';
import { closeServer, listen } from '@udp/runtime';
import { createLogger, startTracing } from '@udp/telemetry';
import { gatewayConfigSchema } from './config';

const SERVICE = 'gateway';

/**
 * Wiring only: configuration in, the gateway out on its port. `shared.inProcess` maps a service URL to its
 * handler when that service runs in this process (the embedded host), so requests skip the HTTP hop.
 */
export async function start(env: NodeJS.ProcessEnv = process.env, shared: { inProcess?: Record<string, RequestHandler> } = {}) {
  const config = loadConfig(gatewayConfigSchema, env);
  startTracing({ serviceName: SERVICE, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
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
  });
  const identity = new InternalIdentity(config.INTERNAL_AUTH_SECRET ?? fileSecret(dataDir, 'internal-identity'));
  const routes: ServiceRoute[] = [
    { prefixes: ['/api/history'], url: config.HISTORY_SVC_URL },
    { prefixes: ['/api/playlist'], url: config.PLAYLIST_SVC_URL },
    { prefixes: ['/api/preference'], url: config.PREFERENCE_SVC_URL },
    { prefixes: ['/api/profile'], url: config.PROFILE_SVC_URL },
    // The QC item catalogue is public and read-only: no credentials.
    { prefixes: ['/api/v2/items', '/api/v2/icons'], url: config.CATALOGUE_SVC_URL, public: true },
  ];
  const app = createGateway({
    authenticator,
    identity,
    logger,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    routes: routes.map((route) => ({ ...route, handler: shared.inProcess?.[route.url] })),
  });
  const { server, port } = await listen(app, config.PORT ?? 8080, config.HOST);
  logger.info({ port, auth: devMode ? 'embedded dev secret' : config.AUTH_JWKS_URL ? 'jwks' : 'shared secret' }, `${SERVICE} listening`);
  return { port, stop: () => closeServer(server) };
}

