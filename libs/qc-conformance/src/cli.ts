/**
 * `npm run conformance -- --base-url <url> [--format text|json|html] [--out-dir <dir>] [--trigger <what>]`
 * Checks a running catalogue API (ours or any other) and prints the report. Exit code 1 when it FAILs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderHtml, renderJson, renderText } from './render';
import { runConformance } from './run';

const USAGE = 'usage: npm run conformance -- --base-url <url> [--format text|json|html] [--out-dir <dir>] [--trigger <what>]';

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

/** The code version: the git commit when run from a checkout (marked when it has local changes). */
function codeVersion(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${commit}+local-changes` : commit;
  } catch {
    return process.env.npm_package_version ? `v${process.env.npm_package_version}` : 'unknown';
  }
}

async function main(args: string[]): Promise<number> {
  const baseUrl = option(args, '--base-url');
  const format = option(args, '--format') ?? 'text';
  if (!baseUrl || !/^https?:\/\//.test(baseUrl) || !['text', 'json', 'html'].includes(format)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const trigger = option(args, '--trigger') ?? (process.env.CI ? 'ci' : 'manual (cli)');
  const report = await runConformance({ baseUrl, trigger, codeVersion: codeVersion() });
  const renderers = { text: renderText, json: renderJson, html: renderHtml };
  process.stdout.write(renderers[format as keyof typeof renderers](report));
  const outDir = option(args, '--out-dir');
  if (outDir) {
    mkdirSync(resolve(outDir), { recursive: true });
    writeFileSync(join(outDir, 'conformance.txt'), renderText(report));
    writeFileSync(join(outDir, 'conformance.json'), renderJson(report));
    writeFileSync(join(outDir, 'conformance.html'), renderHtml(report));
    process.stderr.write(`conformance: reports written to ${resolve(outDir)} (conformance.txt, .json, .html)\n`);
  }
  return report.result === 'FAIL' ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
