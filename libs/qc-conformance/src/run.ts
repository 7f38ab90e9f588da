import { CHECKS, type CheckDefinition } from './checks';
import { CatalogueClient } from './client';
import { type CheckReport, type ConformanceReport, type Finding, type RequestRecord, countersOf, outcomeOf, overallOf } from './report';

export interface ConformanceOptions {
  baseUrl: string;
  /** What started this run, e.g. "manual (cli)", "ci", "test". */
  trigger: string;
  /** The version of this tool's code (git commit or package version). */
  codeVersion: string;
  timeoutMs?: number;
  now?: () => Date;
  checks?: CheckDefinition[];
}

/** Runs every check against a catalogue API, one after the other, and assembles the report. */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const client = new CatalogueClient(options.baseUrl, options.timeoutMs);
  const checks: CheckReport[] = [];
  for (const [index, check] of (options.checks ?? CHECKS).entries()) {
    const requests: RequestRecord[] = [];
    let findings: Finding[];
    let summary: string;
    let ignored = false;
    try {
      const run = await check.run({ client }, requests);
      ({ findings, summary } = run);
      ignored = run.ignored ?? false;
    } catch (error) {
      // A check that cannot finish says why instead of stopping the report.
      findings = [{ level: check.severity, message: `check could not run: ${(error as Error).message}` }];
      summary = 'not completed';
    }
    checks.push({
      number: index + 1,
      id: check.id,
      title: check.title,
      description: check.description,
      severity: check.severity,
      rules: check.rules,
      result: outcomeOf(findings, ignored),
      summary,
      requests,
      findings,
    });
  }
  return {
    tool: { name: 'qc-conformance', codeVersion: options.codeVersion },
    trigger: options.trigger,
    baseUrl: options.baseUrl,
    startedAt: startedAt.toISOString(),
    durationMs: now().getTime() - startedAt.getTime(),
    result: overallOf(checks),
    counters: countersOf(checks),
    checks,
  };
}
