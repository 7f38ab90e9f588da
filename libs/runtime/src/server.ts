import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { type CommonConfig, ConfigError, commonConfigSchema } from '@udp/config';
import { type Logger, stopTelemetry } from '@udp/telemetry';

/** A port someone else holds: a setting to change, said in one line instead of a stack trace. */
function portProblem(error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (error.code === 'EADDRINUSE')
    return new ConfigError(`port ${port} on ${host} is already in use (another instance running?): stop it, or set PORT to a free port`);
  if (error.code === 'EACCES') return new ConfigError(`port ${port} on ${host} needs privileges: set PORT to a port above 1023`);
  return error;
}

/** Fails with the same one-line message as `listen` when the port is taken, before anything else has started. */
export function assertPortFree(port: number, host: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(portProblem(error, port, host)));
    probe.listen(port, host, () => probe.close(() => resolvePromise()));
  });
}

/** How long a client may take and how many connections it may hold (docs/architecture.md, "The public edge"). */
export interface ServerLimits {
  /** The request line and headers must arrive within this (408 and closed after). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this: a slow body cannot hold a connection longer. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections beyond this many are dropped at once (0: no cap). */
  maxConnections: number;
}

/** The limits as configured (`HTTP_*` in libs/config); a bad pair is a start-up error naming both variables. */
export function serverLimitsOf(config: CommonConfig): ServerLimits {
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS)
    throw new ConfigError(
      `invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: ${config.HTTP_HEADERS_TIMEOUT_MS} must not exceed HTTP_REQUEST_TIMEOUT_MS (${config.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  return {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: config.HTTP_MAX_CONNECTIONS,
  };
}

/** The defaults of `serverLimitsOf`, for servers started without a configuration (tests). */
export const DEFAULT_SERVER_LIMITS: ServerLimits = serverLimitsOf(commonConfigSchema.parse({}));

/**
 * Starts listening; resolves with the bound port (PORT=0 picks a free one, for tests). Every server of the system
 * (the gateway's and each service's) starts here, so the limits apply to all of them alike.
 */
export function listen(
  app: Express,
  port: number,
  host: string,
  limits: ServerLimits = DEFAULT_SERVER_LIMITS,
  log?: Pick<Logger, 'warn'>,
): Promise<{ server: Server; port: number }> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // Node checks the two timeouts every 30 s by default, so a slow client would hold on for up to 30 s more:
        // checked every tenth of the shorter timeout instead (at most every 5 s; a walk over the open connections).
        connectionsCheckingInterval: Math.min(
          5000,
          Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)),
        ),
      },
      app,
    );
    if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
    // A full server is a signal for whoever is on call: one line per 10 s at most, with the number dropped since.
    let dropped = 0;
    let loggedAt = 0;
    server.on('drop', () => {
      dropped++;
      if (Date.now() - loggedAt < 10_000) return;
      log?.warn({ dropped, max_connections: limits.maxConnections }, 'connections dropped: HTTP_MAX_CONNECTIONS reached');
      loggedAt = Date.now();
      dropped = 0;
    });
    server.once('error', (error: NodeJS.ErrnoException) => reject(portProblem(error, port, host)));
    server.listen(port, host, () => {
      const address = server.address();
      resolvePromise({ server, port: typeof address === 'object' && address ? address.port : port });
    });
  });
}

/**
 * Stops accepting connections and resolves once the requests in flight are answered. A keep-alive connection is
 * closed as soon as it is idle (its answer sent), not after the keep-alive timeout: a stop lasts as long as the
 * slowest request in flight.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolvePromise) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(idle);
      resolvePromise();
    });
    server.closeIdleConnections();
  });
}

/**
 * Runs an app's `start` as a process: a bad setting prints its message and exits 1. SIGTERM/SIGINT stop it
 * gracefully within `shutdownTimeoutMs` (SHUTDOWN_TIMEOUT_MS, below Kubernetes' terminationGracePeriodSeconds): no new
 * connections, the requests in flight answered, the app's own stop (projections finish their event and give their
 * segments back), then the spans and metrics still queued sent; past the deadline it exits 1 whatever is left.
 */
export function runAsProcess(name: string, start: () => Promise<{ stop: () => Promise<void>; shutdownTimeoutMs?: number }>): void {
  start()
    .then((running) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        const deadlineMs = running.shutdownTimeoutMs ?? 20_000;
        const began = Date.now();
        process.stderr.write(`${name}: ${signal}, stopping (at most ${deadlineMs} ms)\n`);
        setTimeout(() => {
          process.stderr.write(`${name}: not stopped within ${deadlineMs} ms (SHUTDOWN_TIMEOUT_MS); exiting\n`);
          process.exit(1);
        }, deadlineMs).unref();
        // Spans and metrics still queued go out last, so the stop itself is in them.
        const flush = () => stopTelemetry(Math.max(500, deadlineMs - (Date.now() - began) - 500));
        running.stop().then(
          () => flush().then(() => process.exit(0)),
          (error: unknown) => {
            process.stderr.write(`${name}: stop failed: ${(error as Error).message}\n`);
            return flush().then(() => process.exit(1));
          },
        );
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
    })
    .catch((error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`);
      process.exit(1);
    });
}
