import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess } from './process';

const dir = mkdtempSync(join(tmpdir(), 'udp-process-'));
const script = (name: string, body: string) => {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
};

describe('startProcess', () => {
  it('resolves when the pattern appears, keeps the output, and stops the process', async () => {
    const file = script('ready.js', "console.error('warming'); console.log('listening on 4242'); setInterval(() => {}, 1000);");
    const started = await startProcess(file, process.env, { stream: 'stdout', pattern: /listening on (\d+)/ });
    expect(started.ready[1]).toBe('4242');
    expect(started.output('stderr')).toContain('warming');
    await started.stop();
    expect(started.child.exitCode !== null || started.child.signalCode !== null).toBe(true);
  });

  it('rejects with the output when the process exits before it is ready', async () => {
    const file = script('fails.js', "console.error('bad setting: PORT'); process.exit(3);");
    await expect(startProcess(file, process.env, { stream: 'stdout', pattern: /never/ })).rejects.toThrow(
      /exited \(3\)[\s\S]*bad setting: PORT/,
    );
  });
});
