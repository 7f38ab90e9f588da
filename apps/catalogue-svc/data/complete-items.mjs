#!/usr/bin/env node
// Completes the EBU QC catalogue records (source/ebu-qc-items.json, copied from the public item pages)
// into items.json, the catalogue this service publishes. Run it again after changing the rules below:
//   node apps/catalogue-svc/data/complete-items.mjs
// Every field we add or change is named in the item's `Completed` list; nothing else is touched.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = JSON.parse(readFileSync(join(here, 'source', 'ebu-qc-items.json'), 'utf8'));

// The ID suffix names the layer (items README).
const LAYERS = { F: 'bitstream', W: 'wrapper', X: 'crosscheck', B: 'baseband', BI: 'baseband' };

const CHECK_RESULT = {
  Name: 'CheckResult',
  Description: 'Result of the check: true when the material passed, false when it failed.',
  HasLocator: false,
  InReports: 'not applicable',
  InChecks: 'required',
  ValueRange: '{true,false}',
  Type: 'boolean',
};

/** "Audio Bit Depth Expected" -> "AudioBitDepthExpected" (parameter names are EBUQCIDType tokens). */
const identifier = (display) =>
  display.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');

const UNITS = [['dBTP', 'dBTP'], ['dBFS', 'dBFS'], ['LUFS', 'LUFS'], ['LU', 'LU'], ['bits', 'bits'], ['ms', 'ms'], ['frames', 'frames'],
  ['video frames', 'frames'], ['lines', 'lines'], ['pixels', 'pixels'], ['seconds', 'seconds'], ['%', '%']];

/** What the example values say about a parameter: type, unit, locator. Unknown stays unset. */
function describeValues(name, values) {
  const shown = values.map((v) => v.trim()).filter((v) => v && v !== 'N/P' && !v.endsWith('[…]'));
  if (/Segments?$/.test(name) || shown.some((v) => /^from\b/i.test(v) || v.startsWith('{'))) {
    return { Type: 'segment', HasLocator: true, Unit: 'hh:mm:ss:ff' };
  }
  // "16:9 from 10:00:00:00 to ...": a value tied to a place in the timeline.
  const located = shown.some((v) => /\sfrom \d\d:\d\d/.test(v));
  const seen = shown.map((v) => v.replace(/\s+from \d\d:\d\d.*$/, ''));
  if (!seen.length) return {};
  return { ...typeOf(seen), ...(located && { HasLocator: true }) };
}

function typeOf(seen) {
  if (seen.every((v) => /^(true|false)$/i.test(v))) return { Type: 'boolean', ValueRange: '{true,false}' };
  if (seen.every((v) => /^#[0-9A-Fa-f]{6}$/.test(v))) return { Type: 'RGB colour', Representation: '#RRGGBB (hex)' };
  const numbers = seen.map((v) => /^([-+]?\d+(?:\.\d+)?)\s*(?:((?:video )?[A-Za-z%]+)|\(((?:video )?[A-Za-z%]+)\))?\s*(\(.*\)|on .*)?$/.exec(v));
  if (numbers.every(Boolean) && seen.every((v) => !/^\d+:\d+/.test(v) && !/^\d+\/\d+/.test(v) && !/^\d+(,\s*\d+)+$/.test(v))) {
    const unit = numbers.map((m) => UNITS.find(([text]) => text === (m[2] ?? m[3]))?.[1]).find(Boolean);
    const decimal = numbers.some((m) => m[1].includes('.'));
    return { Type: decimal ? 'decimal' : 'integer', ...(unit && { Unit: unit }) };
  }
  if (seen.every((v) => /^\d+(,\s*\d+)+$/.test(v))) return { Type: 'integer list' };
  if (seen.every((v) => /^\d\d:\d\d:\d\d[:;]\d\d$/.test(v))) return { Type: 'timecode', Unit: 'hh:mm:ss:ff' };
  if (seen.every((v) => v.includes(',') && !v.includes('"'))) return { Type: 'string list' };
  return { Type: 'string' };
}

/** Input and output names as the text examples name them, with the values shown and the use (check/report). */
function parseExamples(examples) {
  const found = { input: new Map(), output: new Map() };
  for (const example of examples) {
    const remark = example.Remark ?? '';
    const usage = /\bcheck/i.test(remark) ? 'check' : /\breport/i.test(remark) ? 'report'
      : /Check ?Result/.test(example.Contents) ? 'check' : 'unknown';
    let kind = null;
    for (const raw of example.Contents.split('\n')) {
      let line = raw.trim().replace(/^-+>\s*/, '');
      for (let m; (m = /^(input|output)\s*:?\s*/i.exec(line)); ) {
        kind = m[1].toLowerCase();
        line = line.slice(m[0].length);
      }
      const quoted = /^"([^"]+)"\s*:?\s*(?:=\s*)?(.*)$/.exec(line);
      if (!quoted || !kind) continue;
      let display = quoted[1].trim();
      const inner = /^(Input|Output):\s*(.*)$/.exec(display);
      if (inner) {
        kind = inner[1].toLowerCase();
        display = inner[2];
      }
      const name = identifier(display);
      const entry = found[kind].get(name) ?? { display, usages: new Set(), values: [] };
      entry.usages.add(usage);
      entry.values.push(quoted[2]);
      found[kind].set(name, entry);
    }
  }
  return found;
}

function cardinality(kind, name, usages, usableAs) {
  const modes = usages.has('unknown') ? new Set([...usages, ...usableAs]) : usages;
  const of = (mode) => {
    if (!usableAs.includes(mode)) return 'not applicable';
    if (modes.has(mode)) return kind === 'output' && mode === 'check' && name !== 'CheckResult' ? 'optional' : 'required';
    return kind === 'output' && mode === 'check' ? 'optional' : 'not applicable';
  };
  return { InReports: of('report'), InChecks: of('check') };
}

/**
 * Items whose pages show no input/output names (prose examples or none): their parameters, read from the Definition,
 * are in source/parameters-from-definition.json. Crosscheck items take the values of the F and W items with the same
 * number: such an input is named `<item id>-<output name>`.
 */
const FROM_DEFINITION = JSON.parse(readFileSync(join(here, 'source', 'parameters-from-definition.json'), 'utf8'));

function essenceType(item, layer) {
  if (layer !== 'baseband') return 'format';
  const words = `${item.Tags.join(' ')} ${item.Name}`.toLowerCase();
  if (/\baudio\b/.test(words)) return 'audio';
  if (/\bvideo\b/.test(words)) return 'video';
  return 'unassigned';
}

function usableAs(item) {
  const text = `${item.Definition}\n${(item.TextExamples ?? []).map((e) => e.Remark ?? '').join('\n')}`;
  return /\b(used )?in checks\b/i.test(text) && /\b(used )?in reports\b/i.test(text) ? ['check', 'report'] : ['check'];
}

function complete(raw) {
  const completed = [];
  const item = { ...raw };
  const suffix = /^\d{4}([A-Z]+)$/.exec(item.ID)[1];
  for (const key of ['Aliases', 'Tags', 'References', 'TextExamples']) item[key] = item[key] ?? [];
  if (!item.Layer) {
    item.Layer = LAYERS[suffix];
    completed.push('Layer');
  }
  if (!item.EssenceType) {
    item.EssenceType = essenceType(item, item.Layer);
    completed.push('EssenceType');
  }
  if (!item.UsableAs) {
    item.UsableAs = usableAs(item);
    completed.push('UsableAs');
  }
  if (item.References.some((r) => !r.Name)) {
    // The XSD requires a reference name; some pages show only the remark, which then names it.
    item.References = item.References.map((r) => (r.Name ? r : { ...r, Name: r.Remark }));
    completed.push('References.Name');
  }

  let inputs;
  let outputs;
  const fixed = FROM_DEFINITION[item.ID];
  if (fixed) {
    inputs = fixed.inputs;
    outputs = fixed.outputs;
  } else {
    const found = parseExamples(item.TextExamples);
    const build = (kind) => [...found[kind]].map(([name, entry]) => {
      const described = name === 'CheckResult' ? CHECK_RESULT : describeValues(name, entry.values);
      return {
        Name: name,
        Description: name === 'CheckResult' ? CHECK_RESULT.Description : `${entry.display}, as the item's examples name it.`,
        HasLocator: false,
        ...cardinality(kind, name, entry.usages, item.UsableAs),
        ...described,
      };
    });
    inputs = build('input');
    outputs = build('output');
  }
  // Spec rule 1: an item usable as a check has a boolean CheckResult output.
  if (item.UsableAs.includes('check')) {
    outputs = [CHECK_RESULT, ...outputs.filter((p) => p.Name !== 'CheckResult')];
  }
  item.InputParameters = inputs;
  item.OutputParameters = outputs;
  completed.push('InputParameters', 'OutputParameters');

  const { Source, ...rest } = item;
  return { ...rest, Source, Completed: completed };
}

const items = source.map(complete);
writeFileSync(join(here, 'items.json'), `${JSON.stringify(items, null, 2)}\n`);
process.stderr.write(`wrote ${items.length} item versions to items.json\n`);
