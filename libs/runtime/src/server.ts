import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
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
  /**
   * Connections one peer address may hold (IPv6: per /56, as the rate limit counts); more are dropped at once, so
   * that one address cannot take every slot. 0 or absent: no cap but `maxConnections`. The public edge sets it.
   */
  maxConnectionsPerAddress?: number;
  /** The same for a peer the app trusts as a proxy (Express `trust proxy`, TRUSTED_PROXIES): it carries many clients. */
  maxConnectionsPerProxy?: number;
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
    const drops = new DropReport(limits, log);
    server.on('drop', (peer?: { remoteAddress?: string }) => drops.count('server', peerKey(peer?.remoteAddress)));
    if (limits.maxConnectionsPerAddress || limits.maxConnectionsPerProxy) capPerPeer(server, app, limits, drops);
    server.once('close', () => drops.report());
    server.once('error', (error: NodeJS.ErrnoException) => reject(portProblem(error, port, host)));
    server.listen(port, host, () => {
      const address = server.address();
      resolvePromise({ server, port: typeof address === 'object' && address ? address.port : port });
    });
  });
}

/** A peer as its connections are counted: its address, IPv6 per /56 (one customer's allocation, as the rate limit counts). */
const peerKey = (address: string | undefined) => (address ? ipKeyGenerator(address) : '');

/** How often a server that drops connections says so: one line per interval, with every drop of it counted. */
const DROP_REPORT_MS = 10_000;
/** Distinct peers are counted up to this many per interval (a bounded set, whatever the flood). */
const DROP_PEERS_COUNTED = 10_000;

/**
 * The connections a server dropped, counted over an interval that the first drop opens and reported at its end (or
 * when the server closes) in one warning: how many, from how many peers, and which cap they met. How many peers,
 * never which: the logs hold no client address.
 */
class DropReport {
  private byCap = { server: 0, peer: 0 };
  private readonly peers = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly limits: ServerLimits,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  count(cap: 'server' | 'peer', peer: string): void {
    this.byCap[cap]++;
    if (this.peers.size < DROP_PEERS_COUNTED) this.peers.add(peer);
    this.timer ??= setTimeout(() => this.report(), DROP_REPORT_MS).unref();
  }

  report(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const { server, peer } = this.byCap;
    if (server + peer === 0) return;
    const caps = [...(server ? ['HTTP_MAX_CONNECTIONS'] : []), ...(peer ? ['HTTP_MAX_CONNECTIONS_PER_ADDRESS or _PER_PROXY'] : [])];
    this.log?.warn(
      {
        dropped: server + peer,
        peers: this.peers.size,
        over_max_connections: server,
        over_max_per_peer: peer,
        max_connections: this.limits.maxConnections,
        max_connections_per_address: this.limits.maxConnectionsPerAddress ?? 0,
        max_connections_per_proxy: this.limits.maxConnectionsPerProxy ?? 0,
      },
      `connections dropped: ${caps.join(' and ')} reached`,
    );
    this.byCap = { server: 0, peer: 0 };
    this.peers.clear();
  }
}

/**
 * Caps the connections each peer holds: a peer the app trusts as a proxy (Express's own `trust proxy` function, so
 * the same peers as for `X-Forwarded-For`) gets `maxConnectionsPerProxy` and is counted by its exact address, any
 * other `maxConnectionsPerAddress`. A connection over its peer's cap is closed before it is read.
 */
function capPerPeer(server: Server, app: Express, limits: ServerLimits, drops: DropReport): void {
  const trusted = app.get('trust proxy fn') as ((address: string, hop: number) => boolean) | undefined;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (!address) return;
    const proxy = trusted?.(address, 0) ?? false;
    const cap = (proxy ? limits.maxConnectionsPerProxy : limits.maxConnectionsPerAddress) ?? 0;
    if (cap === 0) return;
    const key = proxy ? `proxy ${address}` : peerKey(address);
    const held = open.get(key) ?? 0;
    if (held >= cap) {
      socket.destroy();
      drops.count('peer', key);
      return;
    }
    open.set(key, held + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}

/**
 * Stops accepting connections and resolves once the requests in flight are answered. A keep-alive connection is
 * closed as soon as it is idle (its answer sent), not after the keep-alive timeout: a stop lasts as long as the
 * slowest request in flight, at most `graceMs`.
 */
export function closeServer(server: Server, graceMs = 5000): Promise<void> {
  return new Promise((resolvePromise) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    // Past the grace, whatever is still open is cut. On Node 20 (not 26) the stop after the live-sync suite waited for
    // good on a connection Node never counted idle (which one, I did not find): a stop is bounded whatever the cause.
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolvePromise();
    });
    server.closeIdleConnections();
  });
}

/**
 * Runs an app's `start` as a process: a bad setting prints its message and exits 1. SIGTERM/SIGINT (or, for a process
 * started with an IPC channel, the end of its parent) stop it gracefully within `shutdownTimeoutMs` (SHUTDOWN_TIMEOUT_MS, below Kubernetes' terminationGracePeriodSeconds): no new
 * connections, the requests in flight answered, the app's own stop (projections finish their event and give their
 * segments back), then the spans and metrics still queued sent; past the deadline it exits 1 whatever is left.
 */
export function runAsProcess(name: string, start: () => Promise<{ stop: () => Promise<void>; shutdownTimeoutMs?: number }>): void {
  // Started with an IPC channel (by tools/start.mjs): it closes when the parent ends, however it ends, and the process
  // stops then rather than run on unwatched. The channel alone keeps no process alive.
  let goneWhileStarting = false;
  let parentGone = (): void => {
    goneWhileStarting = true;
  };
  if (process.channel) {
    process.channel.unref();
    process.once('disconnect', () => parentGone());
  }
  // Listened for from the first moment: a SIGTERM while the app starts (its ready line may be out already) used to end
  // the process by the signal's default action, with no graceful stop (npm-start.int.spec saw exit 1 now and then).
  // It is kept until the start is done, and the stop runs then; a start that takes too long meanwhile ends the process.
  let signalled: string | undefined;
  let onSignal = (signal: string): void => {
    if (signalled) return;
    signalled = signal;
    setTimeout(() => {
      process.stderr.write(`${name}: ${signal} while starting, and still starting after 20000 ms; exiting\n`);
      process.exit(1);
    }, 20_000).unref();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
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
      onSignal = stop;
      parentGone = () => stop('parent process gone');
      if (signalled) stop(signalled);
      else if (goneWhileStarting) parentGone();
    })
    .catch((error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`);
      process.exit(1);
    });
}
