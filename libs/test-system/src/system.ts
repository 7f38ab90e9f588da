import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Express } from 'express';
import request from 'supertest';
import { Authenticator, DEV_ISSUER, InternalIdentity, signDevToken } from '@udp/auth';
import { InProcessBus, type Bus } from '@udp/bus';
import { MemoryEventStore, type EventStore } from '@udp/eventstore';
import { createGateway } from '@udp/gateway-core';
import { MemoryReadModelStore, type ReadModelStore } from '@udp/readmodel';
import { closeServer, listen } from '@udp/runtime';
import { createLogger, type Logger } from '@udp/telemetry';

/** What a service factory receives: the adapters and the identity the gateway signs with. */
export interface ServiceDeps {
  store: EventStore;
  readModels: ReadModelStore;
  bus: Bus;
  identity: InternalIdentity;
  logger: Logger;
}

export interface ServiceUnderTest {
  prefixes: string[];
  public?: boolean;
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
  for (const service of services) {
    const deps: ServiceDeps = {
      store: service.adapters?.store ?? new MemoryEventStore(),
      readModels: service.adapters?.readModels ?? new MemoryReadModelStore(),
      bus: service.adapters?.bus ?? new InProcessBus(5),
      identity,
      logger,
    };
    allDeps.push(deps);
    const created = await service.create(deps);
    const { server, port } = await listen(created.app, 0, '127.0.0.1');
    servers.push(server);
    stops.push(created.stop);
    routes.push({ prefixes: service.prefixes, url: `http://127.0.0.1:${port}`, public: service.public });
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
