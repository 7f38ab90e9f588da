import type { CheckReport, ConformanceReport, RequestRecord } from './report';

const requestLine = (r: RequestRecord) => `${r.status ?? 'no answer'} ${r.method} ${r.path}`;
const findingLine = (f: CheckReport['findings'][number]) =>
  `[${f.level}] ${f.message}${f.itemId ? ` (item ${f.itemId}` : ''}${f.element ? `${f.itemId ? ', ' : ' ('}element ${f.element}` : ''}${f.itemId || f.element ? ')' : ''}`;

/** Repeated requests (one per item) are shown in full up to this many, then summarized, to keep text readable. */
const TEXT_REQUESTS = 12;

export function renderText(report: ConformanceReport): string {
  const out: string[] = [];
  out.push(`QC catalogue conformance report: ${report.result}`);
  out.push(`API: ${report.baseUrl}`);
  out.push(`Run: ${report.startedAt} (${report.durationMs} ms), trigger: ${report.trigger}, code version: ${report.tool.codeVersion}`);
  out.push(`Pass ${report.counters.pass}  Warn ${report.counters.warn}  Fail ${report.counters.fail}  Ignored ${report.counters.ignored}`);
  for (const check of report.checks) {
    out.push('', `${check.number}. ${check.result === 'IGNORED' ? 'ignored' : check.result}  ${check.title}  (${check.severity}-level)`);
    out.push(`   ${check.description}`);
    check.rules.forEach((rule, i) => out.push(`   Rule ${i + 1}: ${rule}`));
    out.push(`   ${check.summary}`);
    out.push(`   Requests (${check.requests.length}):`);
    for (const r of check.requests.slice(0, TEXT_REQUESTS)) out.push(`     ${requestLine(r)}`);
    if (check.requests.length > TEXT_REQUESTS)
      out.push(`     ... ${check.requests.length - TEXT_REQUESTS} more (all in the JSON and HTML reports)`);
    out.push(`   Findings (${check.findings.length}):`);
    check.findings.forEach((f, i) => out.push(`     ${i + 1}. ${findingLine(f)}`));
  }
  return `${out.join('\n')}\n`;
}

export function renderJson(report: ConformanceReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const COLOURS: Record<string, string> = { PASS: '#1a7f37', WARN: '#9a6700', FAIL: '#cf222e', IGNORED: '#6e7781' };

/** One self-contained page: inline style, no script, no external resource. */
export function renderHtml(report: ConformanceReport): string {
  const badge = (result: string) =>
    `<span class="badge" style="background:${COLOURS[result]}">${result === 'IGNORED' ? 'ignored' : result}</span>`;
  const checks = report.checks
    .map(
      (c) => `
<section id="check-${c.number}">
  <h2>${c.number}. ${badge(c.result)} ${escape(c.title)} <small>${c.severity}-level</small></h2>
  <p>${escape(c.description)}</p>
  <ol class="rules">${c.rules.map((r) => `<li>${escape(r)}</li>`).join('')}</ol>
  <p class="summary">${escape(c.summary)}</p>
  <details${c.requests.length <= 12 ? ' open' : ''}><summary>Requests (${c.requests.length})</summary>
    <table><tr><th>Status</th><th>Method</th><th>Path</th></tr>${c.requests.map((r) => `<tr><td>${r.status ?? 'no answer'}</td><td>${r.method}</td><td><code>${escape(r.path)}</code></td></tr>`).join('')}</table>
  </details>
  <h3>Findings (${c.findings.length})</h3>
  ${c.findings.length ? `<table><tr><th>#</th><th>Level</th><th>Message</th><th>Item</th><th>Element</th></tr>${c.findings.map((f, i) => `<tr><td>${i + 1}</td><td>${f.level}</td><td>${escape(f.message)}</td><td>${escape(f.itemId ?? '')}</td><td>${escape(f.element ?? '')}</td></tr>`).join('')}</table>` : '<p>None.</p>'}
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>QC catalogue conformance: ${report.result}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1f2328}
.badge{color:#fff;border-radius:4px;padding:.1rem .5rem;font-size:.9em}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}
section{border-top:1px solid #d0d7de;margin-top:1.5rem}small{color:#6e7781;font-weight:normal}.counters span{margin-right:1.5rem}
</style></head><body>
<h1>QC catalogue conformance report ${badge(report.result)}</h1>
<p>API <code>${escape(report.baseUrl)}</code>, run ${escape(report.startedAt)} (${report.durationMs} ms), trigger: ${escape(report.trigger)}, code version: <code>${escape(report.tool.codeVersion)}</code></p>
<p class="counters"><span>Pass ${report.counters.pass}</span><span>Warn ${report.counters.warn}</span><span>Fail ${report.counters.fail}</span><span>Ignored ${report.counters.ignored}</span></p>
${checks}
</body></html>
`;
}
