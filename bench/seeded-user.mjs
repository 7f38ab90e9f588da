// What bench/export.mjs and bench/erasure-crash.mjs share: one user's data written straight into the embedded event
// stores (export-seed.ts), the embedded system started on them as a child process, and a token of that user.
//   --history=100000 --playlists=50 --preferences=20
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);

/** A bench on one seeded user: `name` names its folders and its progress lines. */
export function seededUserBench(name, user) {
  const sizes = { history: arg('history', 100_000), playlists: arg('playlists', 50), preferences: arg('preferences', 20) };
  const dataDir = mkdtempSync(join(tmpdir(), `udp-bench-${name}-`));
  const outDir = join(root, 'tmp', `bench-${name}-${process.pid}`);
  const phase = (what) => process.stderr.write(`bench ${name}: ${what}\n`);
  const bench = {
    ...sizes,
    user,
    dataDir,
    phase,
    /** The embedded process last started. */
    child: undefined,

    /** Builds the embedded bundle and the seeder, then seeds the user's data into the stores; resolves with the seeding's ms. */
    async buildAndSeed() {
      phase('building');
      execFileSync(process.execPath, [join(root, 'tools', 'build.mjs'), '--outdir', outDir, 'embedded'], { stdio: 'inherit' });
      const { build } = await import('esbuild');
      await build({
        entryPoints: [join(root, 'bench', 'export-seed.ts')],
        outfile: join(outDir, 'export-seed.js'),
        bundle: true,
        platform: 'node',
        packages: 'external',
        tsconfig: join(root, 'tsconfig.base.json'),
        logLevel: 'warning',
      });
      phase(`seeding ${sizes.history} history entries, ${sizes.playlists} playlists, ${sizes.preferences} preferences into the stores`);
      const args = [dataDir, user, String(sizes.history), String(sizes.playlists), String(sizes.preferences)];
      const started = Date.now();
      execFileSync(process.execPath, [join(outDir, 'export-seed.js'), ...args], { stdio: 'inherit' });
      return Date.now() - started;
    },

    /** Spawns the embedded system on the seeded data (more settings in `env`); resolves with its gateway port once ready. */
    start(env = {}) {
      const child = spawn(process.execPath, [join(outDir, 'embedded', 'main.js')], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      bench.child = child;
      return new Promise((resolve, reject) => {
        let out = '';
        child.stderr.on('data', (c) => {
          out += c;
          const m = /gateway on http:\/\/localhost:(\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        child.once('exit', (code) => reject(new Error(`embedded exited (${code}): ${out}`)));
      });
    },

    /** The user's authorization header, signed with the key the embedded system wrote into its data directory. */
    async authorization() {
      const secret = new TextEncoder().encode(readFileSync(join(dataDir, 'secrets', 'jwt-signing.key'), 'utf8').trim());
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(user)
        .setIssuer('udp-embedded')
        .setExpirationTime('1h')
        .sign(secret);
      return `Bearer ${token}`;
    },

    /** Runs the measurement, prints a failure, and always stops the process and removes the data and the build. */
    run(main) {
      main()
        .catch((error) => {
          process.stderr.write(`${error.stack}\n`);
          process.exitCode = 1;
        })
        .finally(() => {
          bench.child?.kill('SIGTERM');
          rmSync(dataDir, { recursive: true, force: true });
          rmSync(outDir, { recursive: true, force: true });
        });
    },
  };
  return bench;
}
