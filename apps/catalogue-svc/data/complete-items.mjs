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

const param = (Name, Description, fields) => ({ Name, Description, HasLocator: false, ...fields });

/**
 * Items whose pages show no input/output names (prose examples or none): parameters from the Definition.
 * Crosscheck items take the values of the F and W items with the same number: such an input is named
 * `<item id>-<output name>`.
 */
const FROM_DEFINITION = {
  '0010X': {
    inputs: [
      param('0010F-LoudnessMetadata', 'Loudness (DialNorm) metadata signalled in the bitstream, as item 0010F reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'decimal', Unit: 'LUFS' }),
      param('0010W-LoudnessMetadata', 'Loudness metadata indicated in the wrapper, as item 0010W reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'decimal', Unit: 'LUFS' }),
      param('0010B-LoudnessTargetLevelIntegrated', 'Measured programme loudness, output of item 0010B.', { InChecks: 'required', InReports: 'not applicable', Type: 'decimal', Unit: 'LUFS' }),
    ],
    outputs: [param('LoudnessMismatchSegment', 'Where the measured and signalled loudness disagree.', { HasLocator: true, InChecks: 'optional', InReports: 'not applicable', Type: 'segment', Unit: 'hh:mm:ss:ff' })],
  },
  '0045X': {
    inputs: [
      param('0045F-GOPStatus', 'GOP status (open or closed) per video track in the bitstream, as item 0045F reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'enumeration', ValueRange: '{open,closed}' }),
      param('0045W-GOPStatus', 'GOP status (open or closed) per video track in the wrapper, as item 0045W reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'enumeration', ValueRange: '{open,closed}' }),
    ],
    outputs: [],
  },
  '0048X': {
    inputs: [
      param('0048F-ScanningType', 'Scanning mode signalled in the bitstream, as item 0048F reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'enumeration', ValueRange: '{interlaced,progressive,PsF}' }),
      param('0048W-ScanningType', 'Scanning mode indicated in the wrapper, as item 0048W reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'enumeration', ValueRange: '{interlaced,progressive,PsF}' }),
      param('0048B-ScanningType', 'Scanning mode measured in the baseband (optional crosscheck).', { InChecks: 'optional', InReports: 'not applicable', Type: 'enumeration', ValueRange: '{interlaced,progressive,PsF}' }),
    ],
    outputs: [],
  },
  '0081X': {
    inputs: [
      param('0081F-VideoFrameCount', 'Video frame count signalled in the bitstream, as item 0081F reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'integer', Unit: 'frames' }),
      param('0081W-VideoFrameCount', 'Video frame count indicated in the wrapper, as item 0081W reads it.', { InChecks: 'required', InReports: 'not applicable', Type: 'integer', Unit: 'frames' }),
    ],
    outputs: [param('VideoFrameCountMeasured', 'Number of frames counted in the video bitstream.', { InChecks: 'optional', InReports: 'not applicable', Type: 'integer', Unit: 'frames' })],
  },
  '0026W': {
    inputs: [param('TimecodeStartExpected', 'Expected timecode start value.', { InChecks: 'optional', InReports: 'not applicable', Type: 'timecode', Unit: 'hh:mm:ss:ff' })],
    outputs: [
      param('TimecodePresent', 'At least one timecode source is present.', { InChecks: 'optional', InReports: 'required', Type: 'boolean', ValueRange: '{true,false}' }),
      param('TimecodeStart', 'Timecode start value per timecode source.', { InChecks: 'optional', InReports: 'required', Type: 'timecode', Unit: 'hh:mm:ss:ff' }),
      param('TimecodeDiscontinuity', 'Where the timecode jumps.', { HasLocator: true, InChecks: 'optional', InReports: 'optional', Type: 'timecode', Unit: 'hh:mm:ss:ff' }),
      param('TimecodeInvalid', 'Where an invalid timecode value appears (e.g. seconds = 80).', { HasLocator: true, InChecks: 'optional', InReports: 'optional', Type: 'timecode', Unit: 'hh:mm:ss:ff' }),
    ],
  },
  '0040F': {
    inputs: [param('VideoDurationExpected', 'Expected duration of the video essence.', { InChecks: 'required', InReports: 'not applicable', Type: 'timecode', Unit: 'hh:mm:ss:ff' })],
    outputs: [param('VideoDuration', 'Duration of the video essence: frame count / frame rate.', { InChecks: 'optional', InReports: 'not applicable', Type: 'timecode', Unit: 'hh:mm:ss:ff' })],
  },
  '0051B': {
    inputs: [
      param('SignalLevelMinimum', 'Lowest acceptable digital sample level (e.g. 5 for 8 bit with the EBU R 103 tolerance).', { InChecks: 'required', InReports: 'required', Type: 'integer' }),
      param('SignalLevelMaximum', 'Highest acceptable digital sample level (e.g. 246 for 8 bit with the EBU R 103 tolerance).', { InChecks: 'required', InReports: 'required', Type: 'integer' }),
    ],
    outputs: [param('SignalLevelViolationSegment', 'Where RGB or Y values lie outside the acceptable range.', { HasLocator: true, InChecks: 'optional', InReports: 'required', Type: 'segment', Unit: 'hh:mm:ss:ff' })],
  },
  '0109F': {
    inputs: [param('SubtitlesFormatExpected', 'Subtitles formats accepted (e.g. EBU-TT, STL, SMPTE-TT).', { InChecks: 'required', InReports: 'not applicable', Type: 'string list' })],
    outputs: [param('SubtitlesFormat', 'Subtitles format detected.', { InChecks: 'optional', InReports: 'not applicable', Type: 'string' })],
  },
};

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
