import { XMLParser } from 'fast-xml-parser';

/** What the checks need of an ItemInfo, read with namespace prefixes removed (any prefix works). */
export interface ParsedParameter {
  kind: 'Input' | 'Output';
  name: string;
  type: string | null;
}

export interface ParsedItem {
  id: string;
  version: string;
  thisVersion: string;
  versions: string[];
  layer: string;
  usableAs: string[];
  inputs: ParsedParameter[];
  outputs: ParsedParameter[];
}

const ARRAYS = new Set(['ItemInfo', 'Version', 'Input', 'Output', 'Alias', 'Tag', 'Reference', 'Example', 'Source']);
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, isArray: (name) => ARRAYS.has(name) });

type Node = Record<string, unknown>;
const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : typeof v === 'object' ? String((v as Node)['#text'] ?? '') : String(v);
const arr = (v: unknown): Node[] => (Array.isArray(v) ? v : v === undefined || v === '' ? [] : [v]) as Node[];

function parameters(container: unknown, kind: 'Input' | 'Output'): ParsedParameter[] {
  if (!container || typeof container !== 'object') return [];
  return arr((container as Node)[kind]).map((p) => ({ kind, name: str(p.Name), type: p.Type === undefined ? null : str(p.Type) }));
}

function itemOf(info: Node): ParsedItem {
  const item = (info.Item ?? {}) as Node;
  return {
    id: str(item.EBUQCID),
    version: str(item.EBUQCVersion),
    thisVersion: str(info.ThisVersion),
    versions: arr((info.Versions as Node | undefined)?.Version).map(str),
    layer: str(item.Layer),
    usableAs: str(item.UsableAs).split(/\s+/).filter(Boolean),
    inputs: parameters(item.Inputs, 'Input'),
    outputs: parameters(item.Outputs, 'Output'),
  };
}

/** The ItemInfo elements of an Items document; null when the text is not such a document. */
export function parseItems(xml: string): ParsedItem[] | null {
  try {
    const doc = parser.parse(xml) as Node;
    const root = doc.Items;
    if (root === undefined) return null;
    return arr((root as Node)?.ItemInfo).map(itemOf);
  } catch {
    return null;
  }
}

/** A single ItemInfo document; null when the text is not one. */
export function parseItemInfo(xml: string): ParsedItem | null {
  try {
    const doc = parser.parse(xml) as Node;
    return doc.ItemInfo && typeof doc.ItemInfo === 'object' ? itemOf(arr(doc.ItemInfo)[0]) : null;
  } catch {
    return null;
  }
}

export const VALUE_ELEMENTS = ['Representation', 'Type', 'ValueRange', 'Unit', 'DefaultValue'] as const;

export interface EmptyElement {
  itemId: string;
  parameter: string;
  element: string;
}

/**
 * Empty value elements, read from the raw text (a parser would hide `<Type/>` vs no element).
 * `xsi:nil="true"` marks an element as deliberately without value, which the rule allows.
 */
export function emptyValueElements(xml: string): EmptyElement[] {
  const found: EmptyElement[] = [];
  const empty = new RegExp(`<(?:[\\w.-]+:)?(${VALUE_ELEMENTS.join('|')})((?:\\s[^>]*)?)(?:/>|>\\s*</(?:[\\w.-]+:)?\\1\\s*>)`, 'g');
  for (const info of xml.matchAll(/<((?:[\w.-]+:)?)ItemInfo[\s>][\s\S]*?<\/\1ItemInfo\s*>/g)) {
    const itemId = /<(?:[\w.-]+:)?EBUQCID>\s*([^<]*?)\s*</.exec(info[0])?.[1] ?? '(no id)';
    for (const param of info[0].matchAll(/<((?:[\w.-]+:)?)(Input|Output)>([\s\S]*?)<\/\1\2\s*>/g)) {
      const name = /<(?:[\w.-]+:)?Name>\s*([^<]*?)\s*</.exec(param[3])?.[1] ?? '(no name)';
      for (const m of param[3].matchAll(empty)) {
        if (/\bnil\s*=\s*["'](true|1)["']/.test(m[2])) continue;
        found.push({ itemId, parameter: `${param[2]} ${name}`, element: m[1] });
      }
    }
  }
  return found;
}
