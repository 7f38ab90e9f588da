import { validateAgainstCatalogueSchema, type SchemaError } from '@udp/qc-schema';
import { emptyValueElements, parseItemInfo, parseItems, type ParsedItem } from './catalogue-xml';
import type { CatalogueClient } from './client';
import type { Finding, Level, RequestRecord } from './report';

export const ITEMS_PATH = '/api/v2/items';
const XML = { accept: 'application/xml' };

export interface CheckContext {
  client: CatalogueClient;
}

export interface CheckRun {
  findings: Finding[];
  summary: string;
  /** True when the check could not be carried out (its input was missing); it then counts as ignored. */
  ignored?: boolean;
}

export interface CheckDefinition {
  id: string;
  title: string;
  description: string;
  severity: Level;
  rules: string[];
  run(ctx: CheckContext, requests: RequestRecord[]): Promise<CheckRun>;
}

const fail = (message: string, itemId?: string, element?: string): Finding => ({
  level: 'fail',
  message,
  ...(itemId && { itemId }),
  ...(element && { element }),
});
const warn = (message: string, itemId?: string, element?: string): Finding => ({
  level: 'warn',
  message,
  ...(itemId && { itemId }),
  ...(element && { element }),
});

const ID_PATTERN = /^\d{4}[A-Za-z]+$/;
const VERSION_PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)(\.(0|[1-9]\d*))?$/;
const LAYER_OF_SUFFIX: Record<string, string> = { F: 'bitstream', W: 'wrapper', X: 'crosscheck', B: 'baseband', BI: 'baseband' };
const CROSSCHECK_INPUT = /^(\d{4}[A-Za-z]+)-([0-9A-Za-z]+)$/;

const urlVersion = (version: string) => version.replace(/\./g, '-');
const elementOf = (message: string) => /Element '(?:\{[^}]*\})?([^']+)'/.exec(message)?.[1];
const compareVersions = (a: string, b: string) => {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
};

/** The item id of the ItemInfo that holds a line of a pretty-printed or single-line Items document. */
function itemAtLine(xml: string, line: number | null): string | undefined {
  if (line === null) return undefined;
  const lines = xml.split('\n');
  let current: string | undefined;
  let inInfo = false;
  for (let i = 0; i < Math.min(line, lines.length); i++) {
    if (/<(?:[\w.-]+:)?ItemInfo[\s>]/.test(lines[i])) {
      inInfo = true;
      current = undefined;
    }
    if (inInfo && current === undefined) current = /<(?:[\w.-]+:)?EBUQCID>\s*([^<]*?)\s*</.exec(lines[i])?.[1];
  }
  if (current === undefined) {
    // The error is in the ItemInfo's Card, before its EBUQCID: look ahead to it.
    for (let i = line; i < lines.length && current === undefined; i++)
      current = /<(?:[\w.-]+:)?EBUQCID>\s*([^<]*?)\s*</.exec(lines[i])?.[1];
  }
  return current;
}

/** Fetches the list and parses it; a finding explains why the check cannot go on when that fails. */
async function fetchList(
  ctx: CheckContext,
  requests: RequestRecord[],
): Promise<{ xml: string; items: ParsedItem[] } | { problem: Finding }> {
  const res = await ctx.client.get(ITEMS_PATH, requests, XML);
  if (res.status !== 200) return { problem: fail(`GET ${ITEMS_PATH} answered ${res.status ?? res.error}`) };
  const items = parseItems(res.text);
  if (!items) return { problem: fail(`GET ${ITEMS_PATH} is not an Items document`) };
  return { xml: res.text, items };
}

const schemaFinding = (e: SchemaError, itemId?: string) => fail(e.message, itemId, elementOf(e.message));

export const CHECKS: CheckDefinition[] = [
  {
    id: 'xsd-items',
    title: 'XSD validation of /items',
    description:
      'The full /api/v2/items response validates against the EBU QC 2026-01 catalogue API schema, which imports the base schema qc.xsd.',
    severity: 'fail',
    rules: [
      'GET /api/v2/items answers 200.',
      'The body validates against qc-catalogue-api-schema.xsd (namespace tag:catalogue.qc.ebu.ch,2026-01) with qc.xsd (tag:qc.ebu.ch,2026-01), using libxml2.',
      'Each schema error is one finding, with the item it occurs in.',
    ],
    async run(ctx, requests) {
      const res = await ctx.client.get(ITEMS_PATH, requests, XML);
      if (res.status !== 200)
        return { findings: [fail(`GET ${ITEMS_PATH} answered ${res.status ?? res.error}`)], summary: 'no document to validate' };
      const result = await validateAgainstCatalogueSchema([{ fileName: 'items.xml', xml: res.text }]);
      return {
        findings: result.errors.map((e) => schemaFinding(e, itemAtLine(res.text, e.line))),
        summary: `${res.text.length} characters validated`,
      };
    },
  },
  {
    id: 'xsd-single-items',
    title: 'XSD validation of single items',
    description:
      'Every item id published in /api/v2/items is fetched from /api/v2/items/{id} and each response validates against the catalogue API schema.',
    severity: 'fail',
    rules: [
      'The ids are the EBUQCID values of /api/v2/items.',
      'GET /api/v2/items/{id} answers 200 for each of them.',
      'Each body validates against the catalogue API schema (root element ItemInfo).',
      'The number of items checked is reported.',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'no item ids', ignored: true };
      const findings: Finding[] = [];
      const documents: Array<{ fileName: string; xml: string }> = [];
      const ids = list.items.map((i) => i.id);
      for (const [n, id] of ids.entries()) {
        const res = await ctx.client.get(`${ITEMS_PATH}/${encodeURIComponent(id)}`, requests, XML);
        if (res.status !== 200) findings.push(fail(`answered ${res.status ?? res.error}`, id));
        else documents.push({ fileName: `item-${n}.xml`, xml: res.text });
      }
      const result = await validateAgainstCatalogueSchema(documents);
      for (const e of result.errors) findings.push(schemaFinding(e, ids[Number(/^item-(\d+)\.xml$/.exec(e.fileName ?? '')?.[1] ?? NaN)]));
      return { findings, summary: `${documents.length} of ${ids.length} items checked` };
    },
  },
  {
    id: 'no-empty-value-elements',
    title: 'No empty enum/value elements',
    description:
      'Representation, Type, ValueRange, Unit and DefaultValue are left out when they have no value, or marked nil; they are never emitted empty.',
    severity: 'warn',
    rules: [
      'Checked over every item of /api/v2/items, in every Input and Output.',
      'An element with no text (<Type/> or <Type></Type>) is a finding, one per element.',
      'An element marked xsi:nil="true" is allowed.',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'nothing to check', ignored: true };
      const empties = emptyValueElements(list.xml);
      return {
        findings: empties.map((e) => warn(`empty ${e.element} in ${e.parameter}`, e.itemId, e.element)),
        summary: `${list.items.length} items checked`,
      };
    },
  },
  {
    id: 'id-pattern',
    title: 'ID pattern',
    description: 'Item ids are four digits followed by letters; the suffix names the layer.',
    severity: 'fail',
    rules: [
      'EBUQCID matches ^[0-9]{4}[A-Za-z]+$.',
      'Each id appears once in /api/v2/items.',
      'A known suffix (F bitstream, W wrapper, X crosscheck, B and BI baseband) agrees with Layer; another suffix is a warning.',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'nothing to check', ignored: true };
      const findings: Finding[] = [];
      const seen = new Set<string>();
      for (const item of list.items) {
        if (!ID_PATTERN.test(item.id)) findings.push(fail(`id "${item.id}" is not four digits followed by letters`, item.id, 'EBUQCID'));
        if (seen.has(item.id)) findings.push(fail('id listed more than once', item.id, 'EBUQCID'));
        seen.add(item.id);
        const suffix = item.id.slice(4);
        if (ID_PATTERN.test(item.id) && !LAYER_OF_SUFFIX[suffix]) findings.push(warn(`unknown suffix ${suffix}`, item.id, 'EBUQCID'));
        else if (LAYER_OF_SUFFIX[suffix] && item.layer !== LAYER_OF_SUFFIX[suffix]) {
          findings.push(fail(`Layer "${item.layer}" does not match suffix ${suffix} (${LAYER_OF_SUFFIX[suffix]})`, item.id, 'Layer'));
        }
      }
      return { findings, summary: `${list.items.length} ids checked` };
    },
  },
  {
    id: 'version-pattern',
    title: 'Version pattern',
    description: 'Versions are <major>.<minor> (optionally .<patch>); the list shows the latest published version of each item.',
    severity: 'fail',
    rules: [
      'EBUQCVersion, ThisVersion and every Versions/Version match MAJOR.MINOR[.PATCH].',
      "ThisVersion equals the item's EBUQCVersion and is one of Versions.",
      'In /api/v2/items, ThisVersion is the highest of Versions (latest published).',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'nothing to check', ignored: true };
      const findings: Finding[] = [];
      for (const item of list.items) {
        for (const [element, value] of [
          ['EBUQCVersion', item.version],
          ['ThisVersion', item.thisVersion],
          ...item.versions.map((v) => ['Version', v]),
        ]) {
          if (!VERSION_PATTERN.test(value)) findings.push(fail(`${element} "${value}" is not MAJOR.MINOR[.PATCH]`, item.id, element));
        }
        if (item.thisVersion !== item.version)
          findings.push(fail(`ThisVersion ${item.thisVersion} differs from EBUQCVersion ${item.version}`, item.id, 'ThisVersion'));
        if (!item.versions.includes(item.thisVersion))
          findings.push(fail(`ThisVersion ${item.thisVersion} is not among Versions`, item.id, 'Versions'));
        const valid = item.versions.filter((v) => VERSION_PATTERN.test(v));
        const highest = valid.sort(compareVersions).at(-1);
        if (highest && VERSION_PATTERN.test(item.thisVersion) && compareVersions(highest, item.thisVersion) > 0) {
          findings.push(fail(`lists version ${item.thisVersion} although ${highest} is published`, item.id, 'ThisVersion'));
        }
      }
      return { findings, summary: `${list.items.length} items checked` };
    },
  },
  {
    id: 'check-result',
    title: 'CheckResult rule',
    description: 'Every item usable as a check has an output named CheckResult of type boolean (true = pass).',
    severity: 'fail',
    rules: ['Applies to items whose UsableAs contains "check".', 'Outputs contain an Output named CheckResult.', 'Its Type is boolean.'],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'nothing to check', ignored: true };
      const findings: Finding[] = [];
      const checks = list.items.filter((i) => i.usableAs.includes('check'));
      for (const item of checks) {
        const result = item.outputs.find((o) => o.name === 'CheckResult');
        if (!result) findings.push(fail('usable as a check but has no CheckResult output', item.id, 'Outputs'));
        else if (result.type !== 'boolean')
          findings.push(fail(`CheckResult has Type "${result.type ?? '(none)'}", not boolean`, item.id, 'Type'));
      }
      return { findings, summary: `${checks.length} check items of ${list.items.length} checked` };
    },
  },
  {
    id: 'crosscheck-consistency',
    title: 'Crosscheck consistency',
    description: 'Crosscheck (X) items take the values of the bitstream (F) and wrapper (W) items with the same number.',
    severity: 'fail',
    rules: [
      'An item with suffix X has Layer crosscheck, and an item with Layer crosscheck has suffix X.',
      'A value taken from another item is an Input named <item id>-<output name>, e.g. 0010F-LoudnessMetadata.',
      'A crosscheck item nnnnX takes at least one value of nnnnF and one of nnnnW.',
      'When the item named by such an input is in the catalogue, the output it names exists there.',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'nothing to check', ignored: true };
      const findings: Finding[] = [];
      const byId = new Map(list.items.map((i) => [i.id, i]));
      const crosschecks = list.items.filter((i) => i.id.endsWith('X') || i.layer === 'crosscheck');
      let resolved = 0;
      let outside = 0;
      for (const item of crosschecks) {
        if (!item.id.endsWith('X')) findings.push(fail(`Layer crosscheck but id suffix ${item.id.slice(4)}`, item.id, 'Layer'));
        if (item.layer !== 'crosscheck') findings.push(fail(`suffix X but Layer "${item.layer}"`, item.id, 'Layer'));
        const number = item.id.slice(0, 4);
        const taken = item.inputs.map((p) => CROSSCHECK_INPUT.exec(p.name)).filter((m): m is RegExpExecArray => m !== null);
        for (const layer of ['F', 'W']) {
          if (!taken.some((m) => m[1] === `${number}${layer}`))
            findings.push(fail(`takes no value of item ${number}${layer}`, item.id, 'Inputs'));
        }
        for (const [, sourceId, output] of taken) {
          const source = byId.get(sourceId);
          if (!source) {
            outside++;
            continue;
          }
          resolved++;
          if (!source.outputs.some((o) => o.name === output))
            findings.push(fail(`input ${sourceId}-${output}: item ${sourceId} has no output ${output}`, item.id, 'Input'));
        }
      }
      return {
        findings,
        summary: `${crosschecks.length} crosscheck items; ${resolved} inputs resolved in the catalogue, ${outside} name items not in it`,
      };
    },
  },
  {
    id: 'unknown-id-404',
    title: '404 for an unknown id',
    description: 'Asking for an item or a version that does not exist answers 404, never another success or a server error.',
    severity: 'fail',
    rules: [
      'GET /api/v2/items/{id} for an id that is not in the catalogue answers 404.',
      'A malformed id answers 404 (or 400), never 5xx.',
      'GET /api/v2/items/{id}/versions/999-0 of a published item answers 404.',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      const known = 'problem' in list ? new Set<string>() : new Set(list.items.map((i) => i.id));
      let unknown = '0000Q';
      for (let n = 0; known.has(unknown); n++) unknown = `${String(n).padStart(4, '0')}Q`;
      const findings: Finding[] = [];
      const missing = await ctx.client.get(`${ITEMS_PATH}/${unknown}`, requests, XML);
      if (missing.status !== 404) findings.push(fail(`unknown id answered ${missing.status ?? missing.error}`, unknown));
      const malformed = await ctx.client.get(`${ITEMS_PATH}/not%20an%20id`, requests, XML);
      if (malformed.status !== 404 && malformed.status !== 400)
        findings.push(fail(`malformed id answered ${malformed.status ?? malformed.error}`, 'not an id'));
      const first = 'problem' in list ? undefined : list.items[0]?.id;
      if (first) {
        const version = await ctx.client.get(`${ITEMS_PATH}/${encodeURIComponent(first)}/versions/999-0`, requests, XML);
        if (version.status !== 404) findings.push(fail(`unknown version 999.0 answered ${version.status ?? version.error}`, first));
      }
      return { findings, summary: `unknown id ${unknown}` };
    },
  },
  {
    id: 'versions-immutable',
    title: 'Versions endpoint immutability',
    description:
      'Every published version stays available at /api/v2/items/{id}/versions/{version} (written 5-0), never changes, and may be cached for long.',
    severity: 'fail',
    rules: [
      "Every version in each item's Versions answers 200 at /versions/{MAJOR-MINOR}, with ThisVersion and EBUQCVersion equal to it.",
      'The latest version holds the same Item as /api/v2/items shows.',
      'Asking again gives the same bytes: with an ETag, If-None-Match answers 304; without, the body is identical.',
      'Cache-Control says immutable or a max-age of at least one day (warning otherwise); an ETag is sent (warning otherwise).',
    ],
    async run(ctx, requests) {
      const list = await fetchList(ctx, requests);
      if ('problem' in list) return { findings: [list.problem], summary: 'nothing to check', ignored: true };
      const findings: Finding[] = [];
      const itemBlocks = new Map<string, string>();
      for (const m of list.xml.matchAll(/<((?:[\w.-]+:)?)Item>([\s\S]*?)<\/\1Item\s*>/g)) {
        const id = /<(?:[\w.-]+:)?EBUQCID>\s*([^<]*?)\s*</.exec(m[2])?.[1];
        if (id) itemBlocks.set(id, m[2].replace(/\s+/g, ' '));
      }
      let count = 0;
      for (const item of list.items) {
        for (const version of item.versions) {
          count++;
          const path = `${ITEMS_PATH}/${encodeURIComponent(item.id)}/versions/${urlVersion(version)}`;
          const res = await ctx.client.get(path, requests, XML);
          if (res.status !== 200) {
            findings.push(fail(`version ${version} answered ${res.status ?? res.error}`, item.id, 'Version'));
            continue;
          }
          const parsed = parseItemInfo(res.text);
          if (!parsed) {
            findings.push(fail(`version ${version} is not an ItemInfo document`, item.id));
            continue;
          }
          if (parsed.thisVersion !== version || parsed.version !== version) {
            findings.push(
              fail(`asked for ${version}, got ThisVersion ${parsed.thisVersion} / EBUQCVersion ${parsed.version}`, item.id, 'ThisVersion'),
            );
          }
          if (version === item.thisVersion) {
            const block = /<((?:[\w.-]+:)?)Item>([\s\S]*?)<\/\1Item\s*>/.exec(res.text)?.[2].replace(/\s+/g, ' ');
            if (block !== itemBlocks.get(item.id))
              findings.push(fail(`latest version ${version} differs from the Item in /api/v2/items`, item.id, 'Item'));
          }
          const cache = res.headers.get('cache-control') ?? '';
          const maxAge = Number(/max-age=(\d+)/.exec(cache)?.[1] ?? 0);
          if (!/immutable/.test(cache) && maxAge < 86_400)
            findings.push(warn(`version ${version}: Cache-Control "${cache}" is neither immutable nor long-lived`, item.id));
          const etag = res.headers.get('etag');
          if (etag) {
            const again = await ctx.client.get(path, requests, { ...XML, 'if-none-match': etag });
            if (again.status !== 304)
              findings.push(
                fail(`version ${version}: If-None-Match with its ETag answered ${again.status ?? again.error}, not 304`, item.id),
              );
          } else {
            findings.push(warn(`version ${version}: no ETag`, item.id));
            const again = await ctx.client.get(path, requests, XML);
            if (again.text !== res.text) findings.push(fail(`version ${version} changed between two requests`, item.id));
          }
        }
      }
      return { findings, summary: `${count} versions of ${list.items.length} items checked` };
    },
  },
  {
    id: 'content-types',
    title: 'Content types',
    description:
      'XML by default and on request, the JSON rendition on Accept: application/json, 406 for a type the API cannot produce, problem+json errors.',
    severity: 'fail',
    rules: [
      'GET /api/v2/items without Accept, and with Accept: application/xml, answers an XML media type (application/xml or text/xml).',
      'With Accept: application/json it answers application/json: an object whose Items hold ID, Name and Version (warning otherwise).',
      'With Accept: text/html only, it answers 406 (warning otherwise).',
      'An error (unknown id) comes as application/problem+json (warning otherwise).',
    ],
    async run(ctx, requests) {
      const findings: Finding[] = [];
      const isXml = (type: string | null) => /^(application|text)\/xml\b/.test(type ?? '');
      const plain = await ctx.client.get(ITEMS_PATH, requests);
      if (plain.status !== 200 || !isXml(plain.headers.get('content-type')))
        findings.push(fail(`no Accept: ${plain.status ?? plain.error} ${plain.headers.get('content-type') ?? ''}`.trim()));
      const xml = await ctx.client.get(ITEMS_PATH, requests, XML);
      if (xml.status !== 200 || !isXml(xml.headers.get('content-type')))
        findings.push(fail(`Accept application/xml: ${xml.status ?? xml.error} ${xml.headers.get('content-type') ?? ''}`.trim()));
      const json = await ctx.client.get(ITEMS_PATH, requests, { accept: 'application/json' });
      if (json.status !== 200 || !/^application\/json\b/.test(json.headers.get('content-type') ?? '')) {
        findings.push(warn(`Accept application/json: ${json.status ?? json.error} ${json.headers.get('content-type') ?? ''}`.trim()));
      } else {
        try {
          const body = JSON.parse(json.text) as { Items?: Array<Record<string, unknown>> };
          const bad = (body.Items ?? []).filter(
            (i) => typeof i.ID !== 'string' || typeof i.Name !== 'string' || typeof i.Version !== 'string',
          );
          if (!Array.isArray(body.Items)) findings.push(warn('JSON rendition has no Items array'));
          for (const item of bad)
            findings.push(warn('JSON item lacks ID, Name or Version', typeof item.ID === 'string' ? item.ID : undefined));
        } catch {
          findings.push(warn('JSON rendition is not valid JSON'));
        }
      }
      const html = await ctx.client.get(ITEMS_PATH, requests, { accept: 'text/html' });
      if (html.status !== 406) findings.push(warn(`Accept text/html answered ${html.status ?? html.error}, not 406`));
      const missing = await ctx.client.get(`${ITEMS_PATH}/0000Q`, requests, XML);
      if (!/^application\/problem\+json\b/.test(missing.headers.get('content-type') ?? '')) {
        findings.push(warn(`an error answered ${missing.headers.get('content-type') ?? 'no content type'}, not application/problem+json`));
      }
      return { findings, summary: 'XML, JSON, unsupported type and error answers checked' };
    },
  },
  {
    id: 'conditional-requests',
    title: 'ETags, 304 and compression',
    description: 'The list can be revalidated cheaply and travels compressed.',
    severity: 'warn',
    rules: [
      'GET /api/v2/items sends a strong ETag (not W/).',
      'If-None-Match with that ETag answers 304.',
      'With Accept-Encoding: br, gzip the answer is compressed (Content-Encoding br or gzip).',
    ],
    async run(ctx, requests) {
      const findings: Finding[] = [];
      const res = await ctx.client.get(ITEMS_PATH, requests, { ...XML, 'accept-encoding': 'br, gzip' });
      if (res.status !== 200)
        return { findings: [warn(`GET ${ITEMS_PATH} answered ${res.status ?? res.error}`)], summary: 'nothing to check', ignored: true };
      const etag = res.headers.get('etag');
      if (!etag) findings.push(warn('no ETag'));
      else {
        if (etag.startsWith('W/')) findings.push(warn(`weak ETag ${etag}`));
        const again = await ctx.client.get(ITEMS_PATH, requests, { ...XML, 'accept-encoding': 'br, gzip', 'if-none-match': etag });
        if (again.status !== 304) findings.push(warn(`If-None-Match answered ${again.status ?? again.error}, not 304`));
      }
      const coding = res.headers.get('content-encoding');
      if (coding !== 'br' && coding !== 'gzip') findings.push(warn(`not compressed (Content-Encoding ${coding ?? 'none'})`));
      return { findings, summary: `ETag ${etag ?? 'none'}, Content-Encoding ${coding ?? 'none'}` };
    },
  },
];
