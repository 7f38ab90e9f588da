import { JSONPath } from 'jsonpath-plus';
import { JSONPATH_PATTERN } from '@udp/contracts';
import { invalid, limitExceeded, notFound, tooLarge } from '@udp/eventsourcing';
import { type JsonPathCost, jsonPathCost } from './jsonpath-cost';

/**
 * Pure operations on a preference document (a JSON object) addressed by a path of field names and array
 * indexes. Every write works on a copy. Own properties only: a segment such as `__proto__` or
 * `constructor` is an ordinary field name, never the prototype.
 */

export type JsonObject = Record<string, unknown>;

export interface DocumentLimits {
  /** Largest document, in bytes of its JSON text. */
  maxDocumentBytes: number;
  /** Longest path, and deepest nesting of a document. */
  maxPathDepth: number;
  /** Longest key, in characters. */
  maxKeyLength: number;
  /** Most steps one JSONPath evaluation may take (counted before it runs: `jsonPathCost`). */
  maxJsonPathSteps: number;
  /** Largest JSONPath answer of a GET, in bytes of its JSON text (about). */
  maxJsonPathResultBytes: number;
}

export type JsonPathLimits = Pick<DocumentLimits, 'maxJsonPathSteps' | 'maxJsonPathResultBytes'>;

const INDEX = /^(0|[1-9]\d{0,8})$/;

export const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);
const isContainer = (value: unknown): value is JsonObject | unknown[] => value !== null && typeof value === 'object';
const hasOwn = (object: object, name: string) => Object.prototype.hasOwnProperty.call(object, name);
const describe = (path: string[], upTo: number) => path.slice(0, upTo + 1).join('/');

/** Sets a property without ever reaching the prototype (a JSON field may be called `__proto__`). */
function define(object: JsonObject, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
}

export function checkKey(key: string, limits: Pick<DocumentLimits, 'maxKeyLength'>): void {
  if (key.length === 0) throw invalid('key must not be empty', 'key');
  if (key.length > limits.maxKeyLength) throw limitExceeded(`key is longer than ${limits.maxKeyLength} characters`, 'key');
}

/**
 * The segments of a `{path}`. Reads may start with a slash (`/field/0/field`), so one leading empty
 * segment is dropped; any other empty segment is refused.
 */
export function parsePath(segments: string[], limits: Pick<DocumentLimits, 'maxPathDepth'>): string[] {
  const path = segments[0] === '' ? segments.slice(1) : segments;
  if (path.length === 0) throw invalid('path must not be empty', 'path');
  if (path.some((s) => s === '')) throw invalid('path must not contain an empty segment (//, or a trailing slash)', 'path');
  if (path.length > limits.maxPathDepth) throw limitExceeded(`path is deeper than ${limits.maxPathDepth} segments`, 'path');
  return path;
}

export type Lookup = { found: true; value: unknown } | { found: false };

/** The value at `path`, if there is one (a missing field, an index out of range, or a scalar on the way: none). */
export function getAt(document: JsonObject, path: string[]): Lookup {
  let current: unknown = document;
  for (const segment of path) {
    if (Array.isArray(current)) {
      if (!INDEX.test(segment) || Number(segment) >= current.length) return { found: false };
      current = current[Number(segment)];
    } else if (isObject(current)) {
      if (!hasOwn(current, segment)) return { found: false };
      current = current[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/**
 * Writes `value` at `path` on a copy of `document` (which may be null: the document is created) and
 * returns the copy. Missing parents are created as objects. In an array a segment must be an index of an
 * element, or its length to append. `merge` merges objects recursively instead of replacing.
 */
export function setAt(document: JsonObject | null, path: string[], value: unknown, mode: 'replace' | 'merge'): JsonObject {
  const root: JsonObject = document ? structuredClone(document) : {};
  let parent: JsonObject | unknown[] = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (Array.isArray(parent)) {
      if (!INDEX.test(segment)) throw invalid(`${describe(path, i)}: an array is indexed by a number`, 'path');
      const index = Number(segment);
      if (index > parent.length || (!last && index === parent.length)) {
        throw invalid(`${describe(path, i)}: index out of range (the array has ${parent.length} elements)`, 'path');
      }
      if (last) {
        parent[index] = mode === 'merge' && index < parent.length ? merged(parent[index], value) : value;
        return root;
      }
      const child: unknown = parent[index];
      if (!isContainer(child)) throw invalid(`${describe(path, i)} holds a scalar; cannot go through it`, 'path');
      parent = child;
    } else {
      if (last) {
        define(parent, segment, mode === 'merge' && hasOwn(parent, segment) ? merged(parent[segment], value) : value);
        return root;
      }
      if (!hasOwn(parent, segment)) define(parent, segment, {});
      const child: unknown = parent[segment];
      if (!isContainer(child)) throw invalid(`${describe(path, i)} holds a scalar; cannot go through it`, 'path');
      parent = child;
    }
  }
  return root;
}

/** Objects merge field by field, recursively; anything else is replaced by the update. */
function merged(current: unknown, update: unknown): unknown {
  if (!isObject(current) || !isObject(update)) return update;
  const result: JsonObject = { ...current };
  for (const [name, value] of Object.entries(update)) define(result, name, hasOwn(result, name) ? merged(result[name], value) : value);
  return result;
}

/** Removes the value at `path` on a copy (an array element is spliced out); 404 when nothing is there. */
export function deleteAt(document: JsonObject, path: string[]): JsonObject {
  if (!getAt(document, path).found) throw notFound(`nothing at ${path.join('/')}`);
  const root = structuredClone(document);
  const parent = getAt(root, path.slice(0, -1)) as { found: true; value: JsonObject | unknown[] };
  const last = path[path.length - 1];
  if (Array.isArray(parent.value)) parent.value.splice(Number(last), 1);
  else delete parent.value[last];
  return root;
}

/** Nesting depth of a JSON value (a scalar is 0, `{"a":1}` is 1), computed without recursion. */
export function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [current, depth] = stack.pop()!;
    if (!isContainer(current)) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(current)) if (isContainer(child)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Size of a document: bytes of its JSON text in UTF-8. */
export const documentBytes = (document: JsonObject): number => Buffer.byteLength(JSON.stringify(document));

/** Refuses a document past the limits: too deep is a 400 on `body`, too large a limit on `document` (413). */
export function checkDocument(document: JsonObject, limits: DocumentLimits): void {
  if (depthOf(document) > limits.maxPathDepth)
    throw limitExceeded(`the document is nested deeper than ${limits.maxPathDepth} levels`, 'body');
  const bytes = documentBytes(document);
  if (bytes > limits.maxDocumentBytes) throw tooLarge(`the document would be ${bytes} bytes; the limit is ${limits.maxDocumentBytes}`);
}

// ---- JSONPath -------------------------------------------------------------------------------------------

/**
 * JSONPath through jsonpath-plus with `eval: false`: filter and script expressions (`?(...)`, `(...)`)
 * are refused by the library instead of being evaluated, so an expression can never run code. Its work is
 * counted first (`jsonPathCost`), and an expression that would take more than `maxJsonPathSteps` steps on
 * this document is refused with a 400 naming the limit, before the library runs: one request cannot hold
 * the event loop (docs/performance.md, "JSONPath").
 */
function checkedCost(document: JsonObject, expression: string, limits: JsonPathLimits): JsonPathCost {
  // The library reads what it can of a malformed expression (`$[` is the whole document, `$[?@.a]` nothing):
  // only the grammar the contracts state reaches it.
  if (!JSONPATH_PATTERN.test(expression)) {
    throw invalid(
      /\[\s*[?(]/.test(expression) ? 'jsonpath: filter and script expressions are not supported' : 'jsonpath: invalid expression',
      'jsonpath',
    );
  }
  const cost = jsonPathCost(document, expression, limits.maxJsonPathSteps);
  if (cost.overBudget) {
    throw limitExceeded(
      `jsonpath: evaluating this expression on this document takes more than ${limits.maxJsonPathSteps} steps ` +
        '(the limit PREFERENCE_MAX_JSONPATH_STEPS); use fewer descendant (..) segments, wildcards or unions',
      'jsonpath',
    );
  }
  return cost;
}

/** Runs the library (after `checkedCost`), once per result type. */
function evaluate<T extends 'value' | 'parent' | 'parentProperty'>(
  document: JsonObject,
  expression: string,
  resultTypes: T[],
): Record<T, unknown[]> {
  try {
    // One pass per result type: the library's `all` shapes a path string and a pointer for every match, which
    // made a DELETE several times slower than its count of steps (docs/performance.md, "JSONPath").
    const results = {} as Record<T, unknown[]>;
    for (const resultType of resultTypes) {
      const result: unknown = JSONPath({ path: expression, json: document, eval: false, wrap: true, resultType });
      results[resultType] = Array.isArray(result) ? result : [];
    }
    return results;
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    throw invalid(
      /prevented/i.test(message)
        ? 'jsonpath: filter and script expressions are not supported'
        : `jsonpath: invalid expression (${message})`,
      'jsonpath',
    );
  } finally {
    // The library keeps every expression it parsed in a process-wide cache, forever: one entry per distinct
    // expression a caller sends would grow the heap without bound.
    delete JSONPath.cache[expression];
  }
}

/** About the length of `JSON.stringify(value)`, memoised per object so that nested matches cost one pass. */
function jsonBytes(value: unknown, memo: WeakMap<object, number>): number {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null).length;
  const known = memo.get(value);
  if (known !== undefined) return known;
  let bytes = 2;
  if (Array.isArray(value)) for (const item of value) bytes += jsonBytes(item, memo) + 1;
  else for (const [name, item] of Object.entries(value)) bytes += JSON.stringify(name).length + 2 + jsonBytes(item, memo);
  memo.set(value, bytes);
  return bytes;
}

/**
 * A definite expression names at most one value: plain names and indexes only (outside quoted names, no
 * wildcard, deep scan, filter, union or slice). As in the Java JsonPath library, it answers the value
 * itself; any other expression answers the list of matches.
 */
export function isDefinite(expression: string): boolean {
  const unquoted = expression.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, "''");
  return !/\*|\.\.|\?|\(|,|:|@|~|\^/.test(unquoted);
}

/** Evaluates a JSONPath expression: the value for a definite one (404 when absent), else the matches. */
export function queryJsonPath(document: JsonObject, expression: string, limits: JsonPathLimits): unknown {
  const cost = checkedCost(document, expression, limits);
  const matches = evaluate(document, expression, ['value']).value;
  // A match is a whole subtree and may be matched many times (`$[0,0,0,0]`): bound what the answer holds.
  const memo = new WeakMap<object, number>();
  let bytes = 0;
  for (const [value, times] of cost.matches) {
    bytes += times * jsonBytes(value, memo);
    if (bytes > limits.maxJsonPathResultBytes) {
      throw limitExceeded(
        `jsonpath: the answer would be larger than ${limits.maxJsonPathResultBytes} bytes ` +
          '(the limit PREFERENCE_MAX_JSONPATH_RESULT_BYTES); narrow the expression',
        'jsonpath',
      );
    }
  }
  if (!isDefinite(expression)) return matches;
  if (matches.length === 0) throw notFound(`nothing matches ${expression}`);
  return matches[0];
}

/**
 * Removes every node the expression matches, on a copy. Array elements are removed from the highest
 * index down so that earlier removals do not shift later ones. `root` is true when `$` itself matched.
 */
export function deleteJsonPathMatches(
  document: JsonObject,
  expression: string,
  limits: JsonPathLimits,
): { document: JsonObject; removed: number; root: boolean } {
  checkedCost(document, expression, limits);
  const root = structuredClone(document);
  const results = evaluate(root, expression, ['parent', 'parentProperty']);
  const parents = results.parent as Array<JsonObject | unknown[] | null>;
  const parentProperties = results.parentProperty as Array<string | number | null>;
  if (parents.some((parent) => parent === null)) return { document: {}, removed: parents.length, root: true };
  const byParent = new Map<JsonObject | unknown[], Set<string | number>>();
  for (const [i, parent] of parents.entries()) {
    const parentProperty = parentProperties[i];
    // A character of a string (`$.theme[0]`, `$.theme.length`) matches, but is no part one can remove.
    if (!isContainer(parent) || parentProperty === null) continue;
    byParent.set(parent, (byParent.get(parent) ?? new Set()).add(parentProperty));
  }
  let removed = 0;
  for (const [parent, properties] of byParent) {
    if (Array.isArray(parent)) {
      const indexes = [...properties]
        .map(Number)
        .filter((i) => i < parent.length)
        .sort((a, b) => b - a);
      for (const index of indexes) parent.splice(index, 1);
      removed += indexes.length;
    } else {
      for (const property of properties) {
        if (!hasOwn(parent, String(property))) continue;
        delete parent[String(property)];
        removed++;
      }
    }
  }
  return { document: root, removed, root: false };
}
