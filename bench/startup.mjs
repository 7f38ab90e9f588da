#!/usr/bin/env node
// node bench/startup.mjs <data dir> [node options...]: starts the embedded bundle on that DATA_DIR as a child,
// prints the time to its ready line, its CPU seconds (all threads) and VmRSS at that moment, then stops it cleanly
// (SIGTERM: it saves its read models) and prints how long the stop took. ROOT=<another checkout> runs that
// checkout's bundle, for an A/B on copies of one seeded directory. Node options such as --cpu-prof go to the child.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [dataDir, ...nodeOptions] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: node bench/startup.mjs <data dir> [node options...]');
const root = resolve(process.env.ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const started = performance.now();
const child = spawn(process.execPath, [...nodeOptions, join(root, 'dist', 'embedded', 'main.js')], {
  cwd: root,
  env: { ...process.env, DATA_DIR: resolve(dataDir), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
let output = '';
let ready = false;
child.stderr.on('data', (chunk) => {
  output += chunk;
  if (ready || !/gateway on http/.test(output)) return;
  ready = true;
  const startMs = performance.now() - started;
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, in clock ticks (100 per second on Linux).
  const cpuSeconds = (Number(stat[11]) + Number(stat[12])) / 100;
  const rssMiB = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
  // A moment for the process to install its signal handlers after the ready line.
  setTimeout(() => {
    const stopping = performance.now();
    child.once('exit', (code) => {
      const result = {
        startMs: Math.round(startMs),
        cpuSeconds,
        rssMiB: Math.round(rssMiB),
        stopMs: Math.round(performance.now() - stopping),
        code,
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    });
    child.kill('SIGTERM');
  }, 500);
});
child.once('exit', (code) => {
  if (!ready) {
    process.stderr.write(`the embedded system exited (${code}) before it was ready:\n${output}`);
    process.exitCode = 1;
  }
});
