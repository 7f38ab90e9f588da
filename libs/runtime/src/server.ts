import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { ConfigError } from '@udp/config';

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

/** Starts listening; resolves with the bound port (PORT=0 picks a free one, for tests). */
export function listen(app: Express, port: number, host: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolvePromise, reject) => {
    const server = app.listen(port, host, (error?: Error) => {
      if (error) return reject(portProblem(error, port, host));
      const address = server.address();
      resolvePromise({ server, port: typeof address === 'object' && address ? address.port : port });
    });
    server.keepAliveTimeout = 65_000;
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolvePromise) => {
    server.close(() => resolvePromise());
    server.closeIdleConnections();
  });
}

/** Runs an app's `start` as a process: a bad setting prints its message and exits 1; SIGTERM/SIGINT stop cleanly. */
export function runAsProcess(name: string, start: () => Promise<{ stop: () => Promise<void> }>): void {
  start()
    .then((running) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`${name}: ${signal}, stopping\n`);
        running.stop().then(
          () => process.exit(0),
          () => process.exit(1),
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
