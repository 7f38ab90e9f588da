import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ConformanceReport, renderHtml, renderJson, renderText, runConformance } from '@udp/qc-conformance';
import { given } from '@udp/test-kit';
import type { TestSystem } from '@udp/test-system';
import { startCatalogueSystem } from '../testing/catalogue';

let system: TestSystem;

beforeAll(async () => {
  system = await startCatalogueSystem();
});
afterAll(() => system.stop());

/** The broken APIs a test opened, closed after it. */
const opened: Array<{ close: () => Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((api) => api.close()));
});

const run = (baseUrl: string) => runConformance({ baseUrl, trigger: 'test', codeVersion: 'test-version' });
const check = (report: ConformanceReport, id: string) => report.checks.find((c) => c.id === id)!;

/**
 * A deliberately broken catalogue API: our own answers, passed through a text transformation, plus
 * optional overrides of whole answers by path. Closed after the test.
 */
async function brokenApi(transform: (xml: string) => string, overrides: Record<string, { status: number; body: string }> = {}) {
  const server = http.createServer(async (req, res) => {
    const override = overrides[req.url ?? ''];
    if (override) {
      res.writeHead(override.status, { 'content-type': 'application/xml' }).end(override.body);
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of ['accept', 'if-none-match']) if (req.headers[name]) headers[name] = String(req.headers[name]);
    const upstream = await fetch(`${system.gatewayUrl}${req.url}`, { headers });
    const type = upstream.headers.get('content-type') ?? '';
    const body = await upstream.text();
    const out: Record<string, string> = { 'content-type': type };
    for (const name of ['etag', 'cache-control']) if (upstream.headers.get(name)) out[name] = upstream.headers.get(name)!;
    res.writeHead(upstream.status, out).end(upstream.status === 200 && /xml/.test(type) ? transform(body) : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const api = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
  opened.push(api);
  return api;
}

/** Our catalogue API, through the gateway. */
const ourApi = () => ({ url: system.gatewayUrl });

describe('the conformance report on our API', () => {
  it('says PASS, with every check listed and passed', async () => {
    await given(ourApi)
      .when((api) => run(api.url))
      .then((report) => {
        expect(report.result).toBe('PASS');
        expect(report.checks.map((c) => [c.number, c.id, c.result])).toEqual([
          [1, 'xsd-items', 'PASS'],
          [2, 'xsd-single-items', 'PASS'],
          [3, 'no-empty-value-elements', 'PASS'],
          [4, 'id-pattern', 'PASS'],
          [5, 'version-pattern', 'PASS'],
          [6, 'check-result', 'PASS'],
          [7, 'crosscheck-consistency', 'PASS'],
          [8, 'unknown-id-404', 'PASS'],
          [9, 'versions-immutable', 'PASS'],
          [10, 'content-types', 'PASS'],
          [11, 'conditional-requests', 'PASS'],
        ]);
        expect(report.counters).toEqual({ pass: 11, warn: 0, fail: 0, ignored: 0 });
        expect(check(report, 'xsd-single-items').summary).toBe('45 of 45 items checked');
        expect(check(report, 'versions-immutable').summary).toBe('46 versions of 45 items checked');
        expect(check(report, 'crosscheck-consistency').summary).toMatch(/^4 crosscheck items; 1 inputs resolved/);
        expect(check(report, 'xsd-items').requests).toEqual([{ method: 'GET', path: '/api/v2/items', status: 200 }]);
        expect(report).toMatchObject({ trigger: 'test', tool: { codeVersion: 'test-version' } });
      });
  });

  it('renders as text, JSON and one self-contained HTML page', async () => {
    await given(() => run(ourApi().url))
      .when((report) => ({ text: renderText(report), json: renderJson(report), html: renderHtml(report) }))
      .then(({ text, json, html }, report) => {
        expect(text).toMatch(/^QC catalogue conformance report: PASS\n/);
        expect(text).toContain('Pass 11  Warn 0  Fail 0  Ignored 0');
        expect(text).toContain('1. PASS  XSD validation of /items  (fail-level)');
        expect(text).toContain('   Rule 1: GET /api/v2/items answers 200.');
        expect(text).toContain('     200 GET /api/v2/items');
        expect(JSON.parse(json)).toEqual(report);
        expect(html).toMatch(/^<!doctype html>/);
        expect(html).not.toMatch(/<script|<link|src=/);
        expect(html).toContain('trigger: test');
      });
  });
});

describe('the conformance report on a broken API', () => {
  it('warns, one finding per empty value element, when only rule 2 is broken', async () => {
    // Empty Unit and Representation elements are valid XSD: only check 3 notices them.
    await given(() =>
      brokenApi((xml) =>
        xml
          .replace(
            /(<qc:EBUQCID>0001W<\/qc:EBUQCID>[\s\S]*?<qc:Name>CheckResult<\/qc:Name>[\s\S]*?<qc:Type>boolean<\/qc:Type>)/,
            '$1<qc:Unit/><qc:Representation></qc:Representation>',
          )
          .replace(/<qc:Type>string<\/qc:Type>/g, '<qc:Type xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>'),
      ),
    )
      .when((api) => run(api.url))
      .then((report) => {
        expect(report.result).toBe('WARN');
        expect(report.counters).toEqual({ pass: 9, warn: 2, fail: 0, ignored: 0 });
        expect(check(report, 'no-empty-value-elements').result).toBe('WARN');
        expect(check(report, 'no-empty-value-elements').findings).toEqual([
          { level: 'warn', message: 'empty Unit in Output CheckResult', itemId: '0001W', element: 'Unit' },
          { level: 'warn', message: 'empty Representation in Output CheckResult', itemId: '0001W', element: 'Representation' },
        ]);
        // The fixture neither compresses nor answers 406: the last check warns too.
        expect(check(report, 'conditional-requests').result).toBe('WARN');
        expect(check(report, 'xsd-items').result).toBe('PASS');
      });
  });

  it('fails with the right findings when items break the schema and the catalogue rules', async () => {
    await given(() =>
      brokenApi(
        (xml) =>
          xml
            // 0105F loses its required Definition: a schema error.
            .replace(/(<qc:EBUQCID>0105F<\/qc:EBUQCID>[\s\S]*?)<qc:Definition>[\s\S]*?<\/qc:Definition>/, '$1')
            // 0003F, a check, loses its CheckResult output.
            .replace(/(<qc:EBUQCID>0003F<\/qc:EBUQCID>[\s\S]*?)<qc:Output>\s*<qc:Name>CheckResult<\/qc:Name>[\s\S]*?<\/qc:Output>/, '$1')
            // 0010X claims to be a wrapper item and takes no wrapper value.
            .replace(/(<qc:EBUQCID>0010X<\/qc:EBUQCID>[\s\S]*?)<qc:Layer>crosscheck<\/qc:Layer>/, '$1<qc:Layer>wrapper</qc:Layer>')
            .replace(/0010W-LoudnessMetadata/g, 'LoudnessMetadataOfTheWrapper')
            // 0025W's version is written badly.
            .replace(
              /<qc:EBUQCVersion>4.0<\/qc:EBUQCVersion>(\s*<qc:Status>published<\/qc:Status>\s*<qc:UsableAs>check report<\/qc:UsableAs>\s*<qc:Description>[^<]*<\/qc:Description>\s*<qc:Definition>Used in Checks, the system shall verify if the Operational)/,
              '<qc:EBUQCVersion>v4</qc:EBUQCVersion>$1',
            ),
        { '/api/v2/items/0000Q': { status: 200, body: '<Items/>' } },
      ),
    )
      .when((api) => run(api.url))
      .then((report) => {
        expect(report.result).toBe('FAIL');
        const findings = (id: string) => check(report, id).findings.map((f) => [f.itemId, f.element, f.message]);
        expect(check(report, 'xsd-items').result).toBe('FAIL');
        expect(findings('xsd-items')).toEqual(
          expect.arrayContaining([['0105F', 'Remarks', expect.stringContaining('This element is not expected')]]),
        );
        expect(findings('xsd-items')).toEqual(expect.arrayContaining([['0025W', 'EBUQCVersion', expect.stringContaining('v4')]]));
        expect(check(report, 'xsd-single-items').result).toBe('FAIL');
        expect(findings('xsd-single-items').map(([item]) => item)).toEqual(expect.arrayContaining(['0105F', '0025W']));
        expect(findings('check-result')).toEqual([['0003F', 'Outputs', 'usable as a check but has no CheckResult output']]);
        expect(findings('id-pattern')).toEqual([['0010X', 'Layer', 'Layer "wrapper" does not match suffix X (crosscheck)']]);
        expect(findings('crosscheck-consistency')).toEqual([
          ['0010X', 'Layer', 'suffix X but Layer "wrapper"'],
          ['0010X', 'Inputs', 'takes no value of item 0010W'],
        ]);
        expect(findings('version-pattern')).toEqual(
          expect.arrayContaining([['0025W', 'EBUQCVersion', 'EBUQCVersion "v4" is not MAJOR.MINOR[.PATCH]']]),
        );
        expect(findings('unknown-id-404')).toEqual([['0000Q', undefined, 'unknown id answered 200']]);
        expect(check(report, 'no-empty-value-elements').result).toBe('PASS');
        expect(report.counters.fail).toBeGreaterThanOrEqual(7);
      });
  });

  it('reports checks it could not carry out as ignored when the API is down', async () => {
    await given(() => ({ url: 'http://127.0.0.1:9' }))
      .when((api) => run(api.url))
      .then((report) => {
        expect(report.result).toBe('FAIL');
        expect(check(report, 'xsd-items').requests).toEqual([{ method: 'GET', path: '/api/v2/items', status: null }]);
        expect(report.counters.ignored).toBeGreaterThanOrEqual(5);
      });
  });
});
