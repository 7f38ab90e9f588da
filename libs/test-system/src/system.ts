import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Express } from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus } from '@udp/bus';
import { MemoryEventStore } from '@udp/eventstore';
import { createGateway } from '@udp/gateway-core';
import { MemoryReadModelStore } from '@udp/readmodel';
import { closeServer, listen, type ServiceAdapters } from '@udp/runtime';
import { createLogger } from '@udp/telemetry';

/** What a service factory receives: the adapters and the identity the gateway signs with. */
export interface ServiceDeps extends ServiceAdapters {
  /** Base address of every service started before this one, by its first prefix (e.g. '/api/history'). */
  serviceUrls: Record<string, string>;
}

export interface ServiceUnderTest {
  prefixes: string[];
  public?: boolean;
  /** Prefixes of this service that need no credentials (listed before `prefixes` at the gateway). */
  publicPrefixes?: string[];
  create(deps: ServiceDeps): Promise<{ app: Express; stop(): Promise<void> }>;
  /** Adapters to use instead of fresh memory ones (e.g. a SQLite store, or Mongo and Kafka). */
  adapters?: Partial<Pick<ServiceDeps, 'store' | 'readModels' | 'bus'>>;
}

export interface TestSystem {
  /** supertest against the gateway: every request takes the real path gateway -> service. */
  http: ReturnType<typeof request>;
  /** `Bearer <token>` for a user, accepted by this system's gateway. */
  auth(userId: string): Promise<string>;
  gatewayUrl: string;
  deps: ServiceDeps[];
  stop(): Promise<void>;
}

/**
 * The gateway and services wired as in production, in this process, on memory adapters by default:
 * services listen on loopback, the gateway authenticates and forwards over HTTP.
 */
export async function startTestSystem(services: ServiceUnderTest[]): Promise<TestSystem> {
  const logger = createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const identity = new InternalIdentity(randomBytes(32).toString('base64url'));
  const jwtSecret = randomBytes(32).toString('base64url');
  const servers: Server[] = [];
  const stops: Array<() => Promise<void>> = [];
  const routes = [];
  const allDeps: ServiceDeps[] = [];
  const serviceUrls: Record<string, string> = {};
  for (const service of services) {
    const deps: ServiceDeps = {
      store: service.adapters?.store ?? new MemoryEventStore(),
      readModels: service.adapters?.readModels ?? new MemoryReadModelStore(),
      bus: service.adapters?.bus ?? new InProcessBus(5),
      identity,
      logger,
      serviceUrls,
    };
    allDeps.push(deps);
    const created = await service.create(deps);
    const { server, port } = await listen(created.app, 0, '127.0.0.1');
    servers.push(server);
    stops.push(created.stop);
    if (service.publicPrefixes) routes.push({ prefixes: service.publicPrefixes, url: `http://127.0.0.1:${port}`, public: true });
    routes.push({ prefixes: service.prefixes, url: `http://127.0.0.1:${port}`, public: service.public });
    serviceUrls[service.prefixes[0]] = `http://127.0.0.1:${port}`;
  }
  const gateway = createGateway({ routes, identity, logger, authenticator: new Authenticator({ jwtSecret, issuer: DEV_ISSUER }) });
  const { server: gatewayServer, port: gatewayPort } = await listen(gateway, 0, '127.0.0.1');
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  return {
    http: request(gatewayUrl),
    gatewayUrl,
    auth: async (userId) => `Bearer ${await signDevToken(jwtSecret, userId)}`,
    deps: allDeps,
    async stop() {
      await closeServer(gatewayServer);
      for (const server of servers) await closeServer(server);
      for (const stop of stops) await stop();
      for (const deps of allDeps) {
        await deps.store.close();
        await deps.readModels.close();
        await deps.bus.close();
      }
    },
  };
}
