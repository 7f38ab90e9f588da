import { type FieldCondition, type Filter, type Param, type PreparedFilter, type Scalar, type Sort, isParam } from './port';

/** A statement parameter taken from a prepared find's param when it runs, as `as` makes it. */
export class Bound {
  constructor(
    readonly param: Param,
    readonly as: (value: Scalar) => unknown,
  ) {}
}
const bound = (param: Param, as: (value: Scalar) => unknown) => new Bound(param, as);
const same = (value: Scalar) => value;

/**
 * The port's filter subset as SQL over documents stored as JSON text (`doc`) with some fields also in columns, with
 * the semantics of filter.ts (MongoDB's): a missing field equals null, range operators compare values of the
 * operand's type only, and a number never equals a boolean (json_extract reads JSON true as the integer 1, hence
 * the type guards).
 */

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function checkFieldName(field: string): string {
  if (!FIELD_NAME.test(field)) throw new Error(`unsupported field name in a read-model query: ${JSON.stringify(field)}`);
  return field;
}

/**
 * How a collection's fields are read in SQL: the fields its indexes name have a column of their own (`f_<field>`,
 * kept by every write), read without parsing the document; any other field is read from the JSON text.
 */
export interface FieldColumns {
  has(field: string): boolean;
}

/** A field's value; for a column, the exact text its indexes are declared with, so that queries can use them. */
export function fieldSql(field: string, columns: FieldColumns): string {
  checkFieldName(field);
  return columns.has(field) ? columnOf(field) : `json_extract(doc, '$.${field}')`;
}

export const columnOf = (field: string) => `"f_${checkFieldName(field)}"`;

/**
 * A field's value as its column holds it: booleans as one-byte blobs, so that no number or string ever equals one,
 * and they sort after strings as in MongoDB; anything but a scalar as null (indexes name scalar fields only).
 */
export function columnValue(value: unknown): string | number | Buffer | null {
  if (typeof value === 'boolean') return value ? TRUE : FALSE;
  if (typeof value === 'string' || typeof value === 'number') return value;
  return null;
}

const TRUE = Buffer.from([1]);
const FALSE = Buffer.from([0]);

/** `columnValue` in SQL, from the document (filling a column added to a collection that has documents). */
export const columnValueSql = (field: string) =>
  `CASE json_type(doc, '$.${checkFieldName(field)}') WHEN 'true' THEN x'01' WHEN 'false' THEN x'00' WHEN 'object' THEN NULL WHEN 'array' THEN NULL ELSE json_extract(doc, '$.${field}') END`;

/** The SQL type test of a column value against a JSON-text field's type names. */
const typeSql = (field: string, columns: FieldColumns, kind: 'number' | 'string' | 'boolean') => {
  if (columns.has(field))
    return `typeof(${field === '_id' ? 'id' : columnOf(field)}) IN ${{ number: "('integer','real')", string: "('text')", boolean: "('blob')" }[kind]}`;
  return `json_type(doc, '$.${field}') IN ${{ number: "('integer','real')", string: "('text')", boolean: "('true','false')" }[kind]}`;
};

/**
 * The key an index keeps for its first field: a hash of the value, not the value (see sqlite.ts, "Erasure"), in a
 * column of its own (`k_<field>`). Equal values have equal keys; a string and a number never share a seed. The
 * SQL function `udp_key` computes the same over a column's value (filling a column added to a collection).
 */
export function partitionKey(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const held = Buffer.isBuffer(value) ? value[0] === 1 : value;
  const text = typeof held === 'string' ? held : String(held);
  // FNV-1a, 32 bits: a collision costs only selectivity, the exact condition is always tested too.
  let hash = typeof held === 'string' ? 0x811c9dc5 : typeof held === 'number' ? 0x050c5d1f : 0x1b873593;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * The key of a document id (`key`, the id index's first field): the hash of the id's part before its first `/`, the
 * owner that per-user documents start with (`userScopedId`), else of the whole id. One user's rows sit together in the
 * index, so a batch of a user's 5,000 entries changes a few of its pages, where a hash of each whole id changed 5,000
 * pages all over it (each written to the log at the next commit).
 */
export function idKey(id: string): number {
  const slash = id.indexOf('/');
  return partitionKey(slash < 0 ? id : id.slice(0, slash)) as number;
}

export const keyColumnOf = (field: string) => `"k_${checkFieldName(field)}"`;

/** `_id` as a column (`id`, always a string): its conditions compare the column, as for an indexed field. */
const ID_COLUMN: FieldColumns = { has: (field) => field === '_id' };

export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/**
 * `filter` as a WHERE clause. `partitionFields`: the first fields of the collection's indexes; an equality on one
 * also gets the term on its key column, which is what lets SQLite use the index.
 */
export function whereSql(filter: Filter | PreparedFilter, columns: FieldColumns, partitionFields: ReadonlySet<string>): SqlCondition {
  const terms: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, ...values: unknown[]) => {
    terms.push(sql);
    params.push(...values);
  };
  for (const [key, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (key === '$or' || key === '$and') {
      const parts = (condition as Filter[]).map((branch) => whereSql(branch, columns, partitionFields));
      if (parts.length === 0) {
        // MongoDB refuses an empty $or/$and; so does filter.ts's compile (some/every of nothing) in its own way.
        add(key === '$or' ? '0' : '1');
        continue;
      }
      add(`(${parts.map((p) => `(${p.sql})`).join(key === '$or' ? ' OR ' : ' AND ')})`, ...parts.flatMap((p) => p.params));
      continue;
    }
    // The id is a column of its own, keyed like an index's first field (`key`): found by its index, never by a scan.
    const keyed = key === '_id' ? { key: 'key', columns: ID_COLUMN } : partitionFields.has(key) ? { key: keyColumnOf(key), columns } : null;
    const field = key === '_id' ? 'id' : fieldSql(key, columns);
    const equality =
      condition === null || typeof condition !== 'object' || isParam(condition) ? condition : (condition as { $eq?: Scalar | Param }).$eq;
    if (keyed && equality !== undefined && equality !== null)
      add(`${keyed.key} = ?`, isParam(equality) ? bound(equality, (value) => keyOf(key, value)) : keyOf(key, equality));
    // A list of values: the list of their keys too, so that SQLite reads the index once per value.
    const listed =
      condition !== null && typeof condition === 'object' && Object.keys(condition).length === 1
        ? (condition as { $in?: Scalar[] }).$in
        : undefined;
    if (keyed && listed && listed.length > 0 && listed.every((v) => v !== null))
      add(`${keyed.key} IN (SELECT value FROM json_each(?))`, JSON.stringify(listed.map((v) => keyOf(key, v))));
    for (const term of conditionSql(key, field, key === '_id' ? ID_COLUMN : columns, condition as FieldCondition | Param))
      add(term.sql, ...term.params);
  }
  return terms.length === 0 ? { sql: '1', params: [] } : { sql: terms.join(' AND '), params };
}

/** The key an equality on `field` is also asked of: the id's owner (`idKey`), or an indexed field's value. */
const keyOf = (field: string, value: unknown) =>
  field === '_id' && typeof value === 'string' ? idKey(value) : partitionKey(columnValue(value));

function conditionSql(key: string, field: string, columns: FieldColumns, condition: FieldCondition | Param): SqlCondition[] {
  if (condition === null || typeof condition !== 'object' || isParam(condition)) return [equalsSql(key, field, columns, condition)];
  return Object.entries(condition).map(([op, operand]) => operatorSql(key, field, columns, op, operand));
}

function operatorSql(key: string, field: string, columns: FieldColumns, op: string, operand: unknown): SqlCondition {
  switch (op) {
    case '$eq':
      return equalsSql(key, field, columns, operand as Scalar | Param);
    case '$ne': {
      const equal = equalsSql(key, field, columns, operand as Scalar | Param);
      // Total, never NULL: a missing field is unequal to any value but null.
      return { sql: `NOT IFNULL(${equal.sql}, 0)`, params: equal.params };
    }
    case '$in': {
      if (Array.isArray(operand) && operand.some(isParam)) throw new Error('$in takes a list of values, not a prepared parameter');
      const values = operand as Scalar[];
      if (values.length === 0) return { sql: '0', params: [] };
      const strings = values.filter((v) => typeof v === 'string');
      const numbers = values.filter((v) => typeof v === 'number');
      const others = values.filter((v) => typeof v !== 'string' && typeof v !== 'number').map((v) => equalsSql(key, field, columns, v));
      const parts: SqlCondition[] = [...others];
      // One parameter for the whole list, however long (a history clear names every item).
      if (strings.length) parts.push({ sql: `${field} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(strings)] });
      if (numbers.length)
        parts.push({
          sql: `(${field} IN (SELECT value FROM json_each(?)) AND ${typeSql(key, columns, 'number')})`,
          params: [JSON.stringify(numbers)],
        });
      return { sql: `(${parts.map((p) => p.sql).join(' OR ')})`, params: parts.flatMap((p) => p.params) };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return rangeSql(key, field, columns, { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op], operand);
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

function equalsSql(key: string, field: string, columns: FieldColumns, operand: Scalar | Param): SqlCondition {
  if (operand === null) return { sql: `${field} IS NULL`, params: [] };
  if (isParam(operand)) {
    if (columns.has(key)) return { sql: `${field} = ?`, params: [bound(operand, columnValue)] };
    if (operand.type === 'boolean')
      return { sql: `json_type(doc, '$.${key}') = ?`, params: [bound(operand, (value) => (value ? 'true' : 'false'))] };
    if (operand.type === 'number') return { sql: `(${field} = ? AND ${typeSql(key, columns, 'number')})`, params: [bound(operand, same)] };
    return { sql: `${field} = ?`, params: [bound(operand, same)] };
  }
  if (columns.has(key)) return { sql: `${field} = ?`, params: [columnValue(operand)] };
  if (typeof operand === 'boolean') return { sql: `json_type(doc, '$.${key}') = '${operand ? 'true' : 'false'}'`, params: [] };
  // JSON true is the integer 1 to json_extract.
  if (typeof operand === 'number') return { sql: `(${field} = ? AND ${typeSql(key, columns, 'number')})`, params: [operand] };
  return { sql: `${field} = ?`, params: [operand] };
}

/** Only values of the operand's type compare (MongoDB's type bracketing); null and other operands match nothing. */
function rangeSql(key: string, field: string, columns: FieldColumns, op: string, operand: unknown): SqlCondition {
  if (isParam(operand)) {
    const as = columns.has(key) ? columnValue : (value: Scalar) => (value === true ? 1 : value === false ? 0 : value);
    return { sql: `(${field} ${op} ? AND ${typeSql(key, columns, operand.type)})`, params: [bound(operand, as)] };
  }
  const kind = typeof operand;
  if (kind !== 'string' && kind !== 'number' && kind !== 'boolean') return { sql: '0', params: [] };
  const value = columns.has(key) ? columnValue(operand) : operand === true ? 1 : operand === false ? 0 : operand;
  return { sql: `(${field} ${op} ? AND ${typeSql(key, columns, kind)})`, params: [value] };
}

/** ORDER BY for a sort; the same expressions as the indexes', so an index in that order serves it. */
export function orderSql(sort: Sort | undefined, columns: FieldColumns): string {
  if (!sort || Object.keys(sort).length === 0) return '';
  return ` ORDER BY ${Object.entries(sort)
    .map(([field, direction]) => `${fieldSql(field, columns)} ${direction === -1 ? 'DESC' : 'ASC'}`)
    .join(', ')}`;
}
