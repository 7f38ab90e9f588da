import { Writable } from 'node:stream';
import { createLogger } from './logger';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(chunk.toString())); done(); } });
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
    createLogger('gateway', 'info', sink).info({ req: { headers: { authorization: 'Bearer secret-token', cookie: 'sid=1', 'x-udp-identity': 'v1.x' } }, token: 'abc' }, 'request');
    expect(JSON.stringify(lines[0])).not.toMatch(/secret-token|sid=1|v1\.x|abc/);
  });
});
