import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StartedProcess, startProcess } from '@udp/test-kit';

const root = join(__dirname, '..', '..');

/**
 * The environment of a process a suite starts: what the test run was given, less the servers (EVENTSTORE_URL,
 * MONGO_URL, KAFKA_BROKERS: the process runs on its embedded adapters), on `dataDir`, listening on any port of
 * loopback; `settings` last.
 */
export function serverlessEnv(dataDir: string, settings: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { EVENTSTORE_URL: _es, MONGO_URL: _mongo, KAFKA_BROKERS: _kafka, ...env } = process.env;
  return { ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...settings };
}

/**
 * The embedded bundle as `npm start` runs it: built into `tmp/<name>-<pid>`, started on a data directory of its own
 * with no server configured, ready once the gateway says where it listens. `remove` deletes the build and the data.
 */
export function embeddedProcess(name: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `udp-${name}-`));
  const given = process.env.UDP_EMBEDDED_DIST;
  const distDir = given ?? join(root, 'tmp', `${name}-${process.pid}`);
  return {
    root,
    dataDir,
    build(): void {
      if (given) return;
      execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir], { stdio: 'inherit' });
    },
    start(settings: Record<string, string> = {}, timeoutMs?: number): Promise<StartedProcess> {
      return startProcess(
        join(distDir, 'embedded', 'main.js'),
        serverlessEnv(dataDir, settings),
        { stream: 'stderr', pattern: /gateway on http:\/\/localhost:(\d+)/ },
        timeoutMs,
      );
    },
    remove(): void {
      rmSync(dataDir, { recursive: true, force: true });
      if (!given) rmSync(distDir, { recursive: true, force: true });
    },
  };
}

/** Where a started embedded system answers. */
export const baseOf = (system: StartedProcess) => `http://127.0.0.1:${system.ready[1]}`;

/**
 * The environment of an app process in a tracing suite: logs at info (each request's line names its trace id), up to
 * 100 traces a second per endpoint, and spans exported to the collector when the run has one (OTELCOL_OTLP_ENDPOINT).
 */
export function tracedEnv(dataDir: string, settings: Record<string, string> = {}): NodeJS.ProcessEnv {
  const collector = process.env.OTELCOL_OTLP_ENDPOINT;
  return serverlessEnv(dataDir, {
    LOG_LEVEL: 'info',
    TRACES_PER_ENDPOINT_PER_S: '100',
    ...(collector ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector } : {}),
    ...settings,
  });
}
