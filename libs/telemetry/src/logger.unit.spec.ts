import { Writable } from 'node:stream';
import { createLogger, logFormat } from './logger';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, sink };
}

describe('createLogger', () => {
  it('writes one JSON object per line with service, level, time and message', () => {
    const { lines, sink } = capture();
    createLogger('history-svc', 'info', sink).child({ request_id: 'r-1' }).info({ port: 1 }, 'listening');
    expect(lines[0]).toMatchObject({ service: 'history-svc', level: 'info', message: 'listening', request_id: 'r-1', port: 1 });
    expect(typeof lines[0].time).toBe('string');
  });

  it('never writes credentials', () => {
    const { lines, sink } = capture();
    createLogger('gateway', 'info', sink).info(
      { req: { headers: { authorization: 'Bearer secret-token', cookie: 'sid=1', 'x-udp-identity': 'v1.x' } }, token: 'abc' },
      'request',
    );
    expect(JSON.stringify(lines[0])).not.toMatch(/secret-token|sid=1|v1\.x|abc/);
  });
});

describe('logFormat', () => {
  it('is pretty on a terminal and JSON anywhere else, unless LOG_FORMAT says', () => {
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ CI: 'true' }, true)).toBe('json');
    expect(logFormat({ JEST_WORKER_ID: '1' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  });
});

describe('pretty logs', () => {
  it("writes one readable line per entry through pino-pretty, the service first, in order with the process's own output", async () => {
    const { buildSync } = await import('esbuild');
    const { execFileSync } = await import('node:child_process');
    const { mkdirSync, mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = join(__dirname, '..', '..', '..');
    // Under the workspace, so the bundle finds the packages it leaves external.
    mkdirSync(join(root, 'tmp'), { recursive: true });
    const dir = mkdtempSync(join(root, 'tmp', 'pretty-'));
    // A real process on a pipe, as a terminal would see it (LOG_FORMAT forces pretty).
    const entry = join(dir, 'entry.js');
    buildSync({
      stdin: {
        contents: `import { createLogger } from './logger';
const log = createLogger('gateway');
log.child({ request_id: 'r-1' }).info({ method: 'GET', path: '/api/x', status: 200, ms: 3.2, upstream_ms: 2.1 }, 'request');
log.info({ port: 8080 }, 'gateway listening');
process.stdout.write('READY\\n');`,
        resolveDir: __dirname,
        loader: 'ts',
      },
      outfile: entry,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      packages: 'external',
      logLevel: 'error',
    });
    try {
      const { JEST_WORKER_ID: _worker, CI: _ci, ...env } = process.env;
      const out = execFileSync(process.execPath, [entry], {
        cwd: root,
        env: { ...env, LOG_FORMAT: 'pretty', NO_COLOR: '1', FORCE_COLOR: '0' },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines = out.trim().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[2]).toBe('READY');
      expect(lines[0]).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: gateway \| request GET \/api\/x 200 3\.2 ms \(upstream 2\.1 ms\) \{"request_id":"r-1"\}$/,
      );
      expect(lines[1]).toMatch(/INFO: gateway \| gateway listening \{"port":8080\}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
