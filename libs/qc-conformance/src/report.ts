/** The conformance report (spec qc-catalogue-api.md, rule 3): overall result, counters, numbered checks. */

export type Level = 'fail' | 'warn';
export type CheckOutcome = 'PASS' | 'WARN' | 'FAIL' | 'IGNORED';
export type Overall = 'PASS' | 'WARN' | 'FAIL';

export interface Finding {
  level: Level;
  message: string;
  itemId?: string;
  element?: string;
}

export interface RequestRecord {
  method: string;
  path: string;
  /** HTTP status, or null when no answer came (network error, timeout). */
  status: number | null;
}

export interface CheckReport {
  number: number;
  id: string;
  title: string;
  description: string;
  /** The worst level a finding of this check can have. */
  severity: Level;
  rules: string[];
  result: CheckOutcome;
  /** One line on what was examined, e.g. "45 items checked". */
  summary: string;
  requests: RequestRecord[];
  findings: Finding[];
}

export interface ConformanceReport {
  tool: { name: string; codeVersion: string };
  trigger: string;
  baseUrl: string;
  startedAt: string;
  durationMs: number;
  result: Overall;
  counters: { pass: number; warn: number; fail: number; ignored: number };
  checks: CheckReport[];
}

/** A check's result from its findings: any fail-level finding fails it, else any warning warns. */
export function outcomeOf(findings: Finding[], ignored: boolean): CheckOutcome {
  if (ignored) return 'IGNORED';
  if (findings.some((f) => f.level === 'fail')) return 'FAIL';
  if (findings.length) return 'WARN';
  return 'PASS';
}

export function overallOf(checks: CheckReport[]): Overall {
  if (checks.some((c) => c.result === 'FAIL')) return 'FAIL';
  if (checks.some((c) => c.result === 'WARN')) return 'WARN';
  return 'PASS';
}

export function countersOf(checks: CheckReport[]): ConformanceReport['counters'] {
  const count = (r: CheckOutcome) => checks.filter((c) => c.result === r).length;
  return { pass: count('PASS'), warn: count('WARN'), fail: count('FAIL'), ignored: count('IGNORED') };
}
