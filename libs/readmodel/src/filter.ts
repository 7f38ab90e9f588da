import type { Document, FieldCondition, Filter, Scalar, Sort } from './port';

/** Evaluates the port's filter subset in memory with MongoDB's semantics for these operators. */
export function matches(doc: Document, filter: Filter): boolean {
  for (const [key, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (key === '$or') {
      if (!(condition as Filter[]).some((f) => matches(doc, f))) return false;
      continue;
    }
    if (!fieldMatches(fieldOf(doc, key) as Scalar | undefined, condition as FieldCondition)) return false;
  }
  return true;
}

function fieldMatches(value: Scalar | undefined, condition: FieldCondition): boolean {
  if (condition === null || typeof condition !== 'object') return equals(value, condition);
  for (const [op, operand] of Object.entries(condition)) {
    switch (op) {
      case '$eq': if (!equals(value, operand as Scalar)) return false; break;
      case '$ne': if (equals(value, operand as Scalar)) return false; break;
      case '$in': if (!(operand as Scalar[]).some((o) => equals(value, o))) return false; break;
      case '$gt': if (!comparable(value, operand) || compare(value!, operand as Scalar) <= 0) return false; break;
      case '$gte': if (!comparable(value, operand) || compare(value!, operand as Scalar) < 0) return false; break;
      case '$lt': if (!comparable(value, operand) || compare(value!, operand as Scalar) >= 0) return false; break;
      case '$lte': if (!comparable(value, operand) || compare(value!, operand as Scalar) > 0) return false; break;
      default: throw new Error(`unsupported filter operator ${op}`);
    }
  }
  return true;
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

export function sortDocuments<T extends Document>(docs: T[], sort: Sort | undefined): T[] {
  if (!sort) return docs;
  return [...docs].sort((x, y) => compareBy(sort, x, y));
}

export function fieldOf(doc: Document, field: string): unknown {
  return (doc as unknown as Record<string, unknown>)[field];
}

/**
 * Copies a document. Read-model documents are plain JSON data (objects, arrays, strings, numbers, booleans,
 * null), so a direct copy is enough, and about nine times cheaper than structuredClone on the read path.
 */
export function cloneData<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneData) as T;
  const copy: Record<string, unknown> = {};
  for (const key in value) copy[key] = cloneData((value as Record<string, unknown>)[key]);
  return copy as T;
}
