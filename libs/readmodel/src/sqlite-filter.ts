import type { FieldCondition, Filter, Scalar, Sort } from './port';

/**
 * The port's filter subset as SQL over documents stored as JSON text (`doc`), with the semantics of filter.ts
 * (MongoDB's): a missing field equals null, range operators compare values of the operand's type only, and a
 * number never equals a boolean (SQLite reads JSON true as the integer 1, hence the `json_type` guards).
 */

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A field's value; the exact text an index on it is declared with, so that queries can use the index. */
export function fieldSql(field: string): string {
  if (!FIELD_NAME.test(field)) throw new Error(`unsupported field name in a read-model query: ${JSON.stringify(field)}`);
  return `json_extract(doc, '$.${field}')`;
}

const typeSql = (field: string) => `json_type(doc, '$.${field}')`;
const NUMBER_TYPES = "('integer','real')";

/**
 * The key an index keeps for its first field: a hash of the value, not the value (see sqlite.ts, "Erasure"). Equal
 * values have equal keys, and the SQL function `udp_key` computes the same over what SQLite holds (JSON true and
 * false are the integers 1 and 0 there).
 */
export function partitionKey(value: Scalar): number | null {
  if (value === null) return null;
  const held = value === true ? 1 : value === false ? 0 : value;
  const text = `${typeof held}:${String(held)}`;
  // FNV-1a, 32 bits: a collision costs only selectivity, the exact condition is always tested too.
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

export const partitionKeySql = (field: string) => `udp_key(${fieldSql(field)})`;

export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/** A scalar as a statement parameter: booleans as SQLite holds them. */
const param = (value: Scalar) => (value === true ? 1 : value === false ? 0 : value);

/**
 * `filter` as a WHERE clause. `partitionFields`: the first fields of the collection's indexes; an equality on one
 * also gets the term on its key, which is what lets SQLite use the index.
 */
export function whereSql(filter: Filter, partitionFields: ReadonlySet<string>): SqlCondition {
  const terms: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, ...values: unknown[]) => {
    terms.push(sql);
    params.push(...values);
  };
  for (const [key, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (key === '$or' || key === '$and') {
      const parts = (condition as Filter[]).map((branch) => whereSql(branch, partitionFields));
      if (parts.length === 0) {
        // MongoDB refuses an empty $or/$and; so does filter.ts's compile (some/every of nothing) in its own way.
        add(key === '$or' ? '0' : '1');
        continue;
      }
      add(`(${parts.map((p) => `(${p.sql})`).join(key === '$or' ? ' OR ' : ' AND ')})`, ...parts.flatMap((p) => p.params));
      continue;
    }
    const field = fieldSql(key);
    const equality = condition === null || typeof condition !== 'object' ? condition : (condition as { $eq?: Scalar }).$eq;
    if (partitionFields.has(key) && equality !== undefined && equality !== null) add(`${partitionKeySql(key)} = ?`, partitionKey(equality));
    for (const term of conditionSql(key, field, condition as FieldCondition)) add(term.sql, ...term.params);
  }
  return terms.length === 0 ? { sql: '1', params: [] } : { sql: terms.join(' AND '), params };
}

function conditionSql(key: string, field: string, condition: FieldCondition): SqlCondition[] {
  if (condition === null || typeof condition !== 'object') return [equalsSql(key, field, condition)];
  return Object.entries(condition).map(([op, operand]) => operatorSql(key, field, op, operand));
}

function operatorSql(key: string, field: string, op: string, operand: unknown): SqlCondition {
  switch (op) {
    case '$eq':
      return equalsSql(key, field, operand as Scalar);
    case '$ne': {
      const equal = equalsSql(key, field, operand as Scalar);
      // Total, never NULL: a missing field is unequal to any value but null.
      return { sql: `NOT IFNULL(${equal.sql}, 0)`, params: equal.params };
    }
    case '$in': {
      const values = operand as Scalar[];
      if (values.length === 0) return { sql: '0', params: [] };
      const strings = values.filter((v) => typeof v === 'string');
      const numbers = values.filter((v) => typeof v === 'number');
      const others = values.filter((v) => typeof v !== 'string' && typeof v !== 'number').map((v) => equalsSql(key, field, v));
      const parts: SqlCondition[] = [...others];
      // One parameter for the whole list, however long (a history clear names every item).
      if (strings.length) parts.push({ sql: `${field} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(strings)] });
      if (numbers.length)
        parts.push({
          sql: `(${field} IN (SELECT value FROM json_each(?)) AND ${typeSql(key)} IN ${NUMBER_TYPES})`,
          params: [JSON.stringify(numbers)],
        });
      return { sql: `(${parts.map((p) => p.sql).join(' OR ')})`, params: parts.flatMap((p) => p.params) };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return rangeSql(key, field, { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op], operand);
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

function equalsSql(key: string, field: string, operand: Scalar): SqlCondition {
  if (operand === null) return { sql: `${field} IS NULL`, params: [] };
  if (typeof operand === 'boolean') return { sql: `${typeSql(key)} = '${operand ? 'true' : 'false'}'`, params: [] };
  if (typeof operand === 'number') return { sql: `(${field} = ? AND ${typeSql(key)} IN ${NUMBER_TYPES})`, params: [operand] };
  return { sql: `${field} = ?`, params: [operand] };
}

/** Only values of the operand's type compare (MongoDB's type bracketing); null and other operands match nothing. */
function rangeSql(key: string, field: string, op: string, operand: unknown): SqlCondition {
  const types =
    typeof operand === 'string' ? "('text')" : typeof operand === 'number' ? NUMBER_TYPES : typeof operand === 'boolean' ? "('true','false')" : null;
  if (types === null) return { sql: '0', params: [] };
  return { sql: `(${field} ${op} ? AND ${typeSql(key)} IN ${types})`, params: [param(operand as Scalar)] };
}

/** ORDER BY for a sort; the same expressions as the indexes', so an index in that order serves it. */
export function orderSql(sort: Sort | undefined): string {
  if (!sort || Object.keys(sort).length === 0) return '';
  return ` ORDER BY ${Object.entries(sort)
    .map(([field, direction]) => `${fieldSql(field)} ${direction === -1 ? 'DESC' : 'ASC'}`)
    .join(', ')}`;
}
