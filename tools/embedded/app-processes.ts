import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type StartedProcess, startProcess } from '@udp/test-kit';

const root = join(__dirname, '..', '..');

/** A started app: its process and its address on loopback. */
export interface AppProcess {
  process: StartedProcess;
  url: string;
}

/**
 * Apps as separate processes, as the distributed mode runs them: built once into `tmp/<name>-<pid>` (the real process
 * entries), each started with its environment and ready once it logs that it listens; `stopAll` stops them in reverse
 * order and removes the build.
 */
export function appProcesses(name: string, apps: string[]) {
  const distDir = join(root, 'tmp', `${name}-${process.pid}`);
  const started: StartedProcess[] = [];
  return {
    distDir,
    build(): void {
      execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', distDir, ...apps], { stdio: 'inherit' });
    },
    async start(app: string, env: NodeJS.ProcessEnv): Promise<AppProcess> {
      const ready = { stream: 'stdout' as const, pattern: new RegExp(`"port":(\\d+)[^\\n]*"message":"${app} listening"`) };
      const started_ = await startProcess(join(distDir, 'apps', app, 'main.js'), env, ready);
      started.push(started_);
      return { process: started_, url: `http://127.0.0.1:${started_.ready[1]}` };
    },
    /** A tool of the gateway's bundle (`token`, `codops-secret`), run with `env`. */
    tool(tool: string, arg: string, env: NodeJS.ProcessEnv): string {
      return execFileSync(process.execPath, [join(distDir, 'apps', 'gateway', `${tool}.js`), arg], { env })
        .toString()
        .trim();
    },
    async stopAll(): Promise<void> {
      for (const p of started.reverse()) await p.stop();
      rmSync(distDir, { recursive: true, force: true });
    },
  };
}
