import { type Document, type FieldCondition, type Filter, type Param, type PreparedFilter, type Scalar, type Sort, isParam } from './port';

type Test<V> = (value: V) => boolean;

/**
 * The port's filter subset as a test of one document, with MongoDB's semantics for these operators. The filter's
 * keys and operators are read once, not once per document: a list query tests every document it passes over.
 * An operator the subset lacks is refused here, whatever the collection holds.
 */
export function compileFilter(filter: Filter): Test<Document> {
  const tests: Test<Document>[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (key === '$or') {
      const branches = (condition as Filter[]).map(compileFilter);
      tests.push((doc) => branches.some((branch) => branch(doc)));
    } else if (key === '$and') {
      const parts = (condition as Filter[]).map(compileFilter);
      tests.push((doc) => parts.every((part) => part(doc)));
    } else {
      const test = compileCondition(condition as FieldCondition);
      tests.push((doc) => test(fieldOf(doc, key) as Scalar | undefined));
    }
  }
  return allOf(tests);
}

function compileCondition(condition: FieldCondition): Test<Scalar | undefined> {
  if (condition === null || typeof condition !== 'object') return (value) => equals(value, condition);
  return allOf(Object.entries(condition).map(([op, operand]) => operatorTest(op, operand)));
}

function operatorTest(op: string, operand: unknown): Test<Scalar | undefined> {
  const scalar = operand as Scalar;
  switch (op) {
    case '$eq':
      return (value) => equals(value, scalar);
    case '$ne':
      return (value) => !equals(value, scalar);
    case '$in':
      return (value) => (operand as Scalar[]).some((o) => equals(value, o));
    case '$gt':
      return (value) => comparable(value, operand) && compare(value!, scalar) > 0;
    case '$gte':
      return (value) => comparable(value, operand) && compare(value!, scalar) >= 0;
    case '$lt':
      return (value) => comparable(value, operand) && compare(value!, scalar) < 0;
    case '$lte':
      return (value) => comparable(value, operand) && compare(value!, scalar) <= 0;
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

function allOf<V>(tests: Test<V>[]): Test<V> {
  if (tests.length === 1) return tests[0];
  return (value) => {
    for (const test of tests) if (!test(value)) return false;
    return true;
  };
}

// MongoDB treats a missing field as null for equality.
function equals(value: Scalar | undefined, operand: Scalar): boolean {
  return (value ?? null) === operand;
}

// Range operators only compare values of the same type (MongoDB's type bracketing).
function comparable(value: unknown, operand: unknown): boolean {
  return value !== undefined && value !== null && typeof value === typeof operand;
}

function compare(a: Scalar, b: Scalar): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

/** Orders two documents by a sort specification, as MongoDB would. */
export function compareBy(sort: Sort, x: Document, y: Document): number {
  for (const field in sort) {
    const c = compare((fieldOf(x, field) ?? null) as Scalar, (fieldOf(y, field) ?? null) as Scalar);
    if (c !== 0) return c * sort[field];
  }
  return 0;
}

/** `compareBy` for one sort specification, its fields listed once: index upkeep compares millions of times. */
export function comparatorFor(sort: Sort): (x: Document, y: Document) => number {
  const fields = Object.keys(sort);
  const directions = fields.map((field) => sort[field]);
  return (x, y) => {
    for (let i = 0; i < fields.length; i++) {
      const c = compare((fieldOf(x, fields[i]) ?? null) as Scalar, (fieldOf(y, fields[i]) ?? null) as Scalar);
      if (c !== 0) return c * directions[i];
    }
    return 0;
  };
}

export function sortDocuments<T extends Document>(docs: T[], sort: Sort | undefined): T[] {
  if (!sort) return docs;
  return [...docs].sort((x, y) => compareBy(sort, x, y));
}

export function fieldOf(doc: Document, field: string): unknown {
  return (doc as unknown as Record<string, unknown>)[field];
}

/**
 * Copies a document. Read-model documents are plain JSON data (objects, arrays, strings, numbers, booleans,
 * null), so a direct copy is enough, and much cheaper than structuredClone on the read path (docs/performance.md,
 * "Read-model copies").
 */
export function cloneData<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneData) as T;
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    const item = cloneData((value as Record<string, unknown>)[key]);
    // A JSON field may be called `__proto__`: an assignment would set the copy's prototype instead.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as T;
}

/** Numeric range every document matching a filter has in one field (from `$lt`... and `$or` branches); a shortcut only. */
export interface NumericBounds {
  upper?: { value: number; inclusive: boolean };
  lower?: { value: number; inclusive: boolean };
}

export function numericBounds(filter: Filter, field: string): NumericBounds | undefined {
  const own = conditionBounds(filter[field] as FieldCondition | undefined);
  const branches = filter.$or?.map((branch) => numericBounds(branch, field));
  // An $or bounds the field only when every branch does; then by the loosest of them.
  const either = branches && branches.every((b) => b !== undefined) ? branches.reduce((a, b) => loosest(a!, b!)) : undefined;
  if (!own) return either;
  if (!either) return own;
  return tightest(own, either);
}

function conditionBounds(condition: FieldCondition | undefined): NumericBounds | undefined {
  if (typeof condition === 'number') return { upper: { value: condition, inclusive: true }, lower: { value: condition, inclusive: true } };
  if (condition === null || typeof condition !== 'object') return undefined;
  const bounds: NumericBounds = {};
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const eq = num(condition.$eq);
  if (eq !== undefined) return { upper: { value: eq, inclusive: true }, lower: { value: eq, inclusive: true } };
  if (num(condition.$lt) !== undefined) bounds.upper = { value: condition.$lt as number, inclusive: false };
  if (num(condition.$lte) !== undefined) bounds.upper = { value: condition.$lte as number, inclusive: true };
  if (num(condition.$gt) !== undefined) bounds.lower = { value: condition.$gt as number, inclusive: false };
  if (num(condition.$gte) !== undefined) bounds.lower = { value: condition.$gte as number, inclusive: true };
  return bounds.upper || bounds.lower ? bounds : undefined;
}

function loosest(a: NumericBounds, b: NumericBounds): NumericBounds {
  const result: NumericBounds = {};
  if (a.upper && b.upper)
    result.upper =
      a.upper.value !== b.upper.value
        ? a.upper.value > b.upper.value
          ? a.upper
          : b.upper
        : { value: a.upper.value, inclusive: a.upper.inclusive || b.upper.inclusive };
  if (a.lower && b.lower)
    result.lower =
      a.lower.value !== b.lower.value
        ? a.lower.value < b.lower.value
          ? a.lower
          : b.lower
        : { value: a.lower.value, inclusive: a.lower.inclusive || b.lower.inclusive };
  return result;
}

function tightest(a: NumericBounds, b: NumericBounds): NumericBounds {
  const pick = (x?: { value: number; inclusive: boolean }, y?: { value: number; inclusive: boolean }, upper = true) => {
    if (!x || !y) return x ?? y;
    if (x.value !== y.value) return (upper ? x.value < y.value : x.value > y.value) ? x : y;
    return { value: x.value, inclusive: x.inclusive && y.inclusive };
  };
  return { upper: pick(a.upper, b.upper, true), lower: pick(a.lower, b.lower, false) };
}

/** True when a numeric value is certainly outside the bounds (so the document cannot match); anything else is left to `matches`. */
export function outsideBounds(value: unknown, bounds: NumericBounds): boolean {
  if (typeof value !== 'number') return false;
  const { upper, lower } = bounds;
  if (upper && (value > upper.value || (!upper.inclusive && value === upper.value))) return true;
  if (lower && (value < lower.value || (!lower.inclusive && value === lower.value))) return true;
  return false;
}

/** The value `param` is given: of its declared type, or an error (a prepared shape never meets another type). */
export function paramValue(param: Param, values: Readonly<Record<string, Scalar>>): Scalar {
  const value = values[param.$param];
  if (typeof value !== param.type) throw new Error(`read-model query parameter ${param.$param} must be a ${param.type}`);
  return value;
}

/** A prepared filter with its params' values in place: the filter an adapter without prepared statements runs. */
export function bindParams(filter: PreparedFilter, values: Readonly<Record<string, Scalar>>): Filter {
  const bound: Filter = {};
  for (const [key, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (key === '$or' || key === '$and') bound[key] = (condition as PreparedFilter[]).map((branch) => bindParams(branch, values));
    else if (isParam(condition)) bound[key] = paramValue(condition, values);
    else if (condition !== null && typeof condition === 'object')
      bound[key] = Object.fromEntries(
        Object.entries(condition).map(([op, operand]) => [op, isParam(operand) ? paramValue(operand, values) : operand]),
      ) as FieldCondition;
    else bound[key] = condition;
  }
  return bound;
}

/** The selected fields of a document, a missing one as null. */
export function selectFields<K extends string>(doc: Document, fields: readonly K[]): Record<K, unknown> {
  const selected = {} as Record<K, unknown>;
  for (const field of fields) selected[field] = fieldOf(doc, field) ?? null;
  return selected;
}
