import { type ChildProcess, spawn } from 'node:child_process';

export interface StartedProcess {
  child: ChildProcess;
  /** The match of the readiness pattern (its groups: the port, the address...). */
  ready: RegExpExecArray;
  /** The exit code; listened for from the start, since a killed child may be gone before anyone asks. */
  exited: Promise<number | null>;
  /** Everything the process has written on that stream so far. */
  output(stream: 'stdout' | 'stderr'): string;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Runs a Node script as a child process (a built bundle: the real entry point) and resolves once `pattern`
 * appears on `stream`. Its output is kept for the test; set TEST_CHILD_LOGS=1 to see it live.
 */
export function startProcess(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: { stream: 'stdout' | 'stderr'; pattern: RegExp },
  timeoutMs = 30_000,
): Promise<StartedProcess> {
  const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const text = { stdout: '', stderr: '' };
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} not ready within ${timeoutMs} ms:\n${text.stderr}`));
    }, timeoutMs);
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream]!.on('data', (chunk: Buffer) => {
        text[stream] += chunk.toString();
        if (process.env.TEST_CHILD_LOGS) process.stderr.write(chunk);
        const match = stream === ready.stream ? ready.pattern.exec(text[stream]) : null;
        if (!match) return;
        clearTimeout(timer);
        resolve({
          child,
          ready: match,
          exited,
          output: (which) => text[which],
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before it was ready:\n${text.stderr}`));
    });
  });
}
