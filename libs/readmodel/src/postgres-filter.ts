import { paramValue } from './filter';
import { type FieldCondition, type Filter, type Param, type PreparedFilter, type Scalar, type Sort, isParam } from './port';
import { checkFieldName } from './sqlite-filter';

/**
 * The port's filter subset as SQL over documents stored as `jsonb` (`doc`), with the semantics of filter.ts (MongoDB's):
 * a missing field equals null, range operators compare values of the operand's type only, a number never equals a
 * boolean, and values sort in MongoDB's order of types (null and missing, numbers, strings, objects, arrays, booleans).
 *
 * A field is read as three expressions, each never NULL, which are also the keys of its expression indexes:
 * - `rank`: its type, in MongoDB's order (0 null or missing, 1 number, 2 string, 3 object, 4 array, 5 boolean);
 * - `str`: a string's text, compared byte by byte (`COLLATE "C"`, as MongoDB and the memory store compare), else '';
 * - `val`: any other value as jsonb (numbers compare as numbers, false before true), a string as JSON null.
 * jsonb alone would not do: it orders strings before numbers, and compares strings in the database's collation.
 * Every condition names all three for the value it tests, so that an index on a field serves an equality on it
 * and then the order of the fields after it (the history's `userId` then `date`, `itemId`).
 * The id is the `id` column (text, `COLLATE "C"`).
 */

export const rankSql = (field: string) =>
  `(CASE jsonb_typeof(doc->'${checkFieldName(field)}') WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'object' THEN 3 WHEN 'array' THEN 4 WHEN 'boolean' THEN 5 ELSE 0 END)`;
export const strSql = (field: string) =>
  `(CASE WHEN jsonb_typeof(doc->'${checkFieldName(field)}') = 'string' THEN doc->>'${field}' ELSE '' END COLLATE "C")`;
export const valSql = (field: string) =>
  `(CASE WHEN jsonb_typeof(doc->'${checkFieldName(field)}') = 'string' THEN 'null'::jsonb ELSE COALESCE(doc->'${field}', 'null'::jsonb) END)`;

/** The expressions a field is ordered and indexed by, in order. */
export const keySql = (field: string): string[] => (field === '_id' ? ['id'] : [rankSql(field), strSql(field), valSql(field)]);

/** A statement parameter taken from a prepared find's param when it runs, as `as` makes it. */
export class Bound {
  constructor(
    readonly param: Param,
    readonly as: (value: Scalar) => unknown,
  ) {}
}

export interface SqlCondition {
  sql: string;
  params: unknown[];
}

/** Builds one statement's text and its parameters (`$1`...), in order. */
class Statement {
  readonly params: unknown[] = [];
  add(value: unknown, cast = ''): string {
    this.params.push(value);
    return `$${this.params.length}${cast}`;
  }
}

const asJson = (value: Scalar) => JSON.stringify(value);
const same = (value: Scalar) => value;

/** `filter` as a WHERE clause; its parameters are numbered after `offset` others. */
export function whereSql(filter: Filter | PreparedFilter, offset = 0): SqlCondition {
  const statement = new Statement();
  for (let i = 0; i < offset; i++) statement.params.push(undefined);
  const sql = filterSql(filter, statement);
  return { sql, params: statement.params.slice(offset) };
}

function filterSql(filter: Filter | PreparedFilter, statement: Statement): string {
  const terms: string[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (key === '$or' || key === '$and') {
      const parts = (condition as Filter[]).map((branch) => filterSql(branch, statement));
      // As filter.ts: `some` of nothing is false, `every` of nothing true.
      if (parts.length === 0) terms.push(key === '$or' ? 'false' : 'true');
      else terms.push(`(${parts.map((p) => `(${p})`).join(key === '$or' ? ' OR ' : ' AND ')})`);
      continue;
    }
    if (key !== '_id') checkFieldName(key);
    terms.push(...conditionSql(key, condition as FieldCondition | Param, statement));
  }
  return terms.length === 0 ? 'true' : terms.join(' AND ');
}

function conditionSql(field: string, condition: FieldCondition | Param, statement: Statement): string[] {
  if (condition === null || typeof condition !== 'object' || isParam(condition)) return [equalsSql(field, condition, statement)];
  return Object.entries(condition).map(([op, operand]) => operatorSql(field, op, operand, statement));
}

/** An operand's type: a param's declared one, or a scalar's own (null for null). */
function typeOf(operand: Scalar | Param): 'string' | 'number' | 'boolean' | null {
  if (isParam(operand)) return operand.type;
  if (operand === null) return null;
  const kind = typeof operand;
  return kind === 'string' || kind === 'number' || kind === 'boolean' ? kind : null;
}

/** The statement parameter for an operand: as given, or bound to its param when the prepared find runs. */
function operandParam(operand: Scalar | Param, as: (value: Scalar) => unknown, statement: Statement, cast: string): string {
  return statement.add(isParam(operand) ? new Bound(operand, as) : as(operand), cast);
}

const RANK = { number: 1, string: 2, boolean: 5 } as const;

function equalsSql(field: string, operand: Scalar | Param, statement: Statement): string {
  const kind = typeOf(operand);
  if (field === '_id') return kind === 'string' ? `id = ${operandParam(operand, same, statement, '::text')}` : 'false';
  if (kind === null) return operand === null ? `${rankSql(field)} = 0` : 'false';
  if (kind === 'string')
    return `(${rankSql(field)} = 2 AND ${strSql(field)} = ${operandParam(operand, same, statement, '::text')} AND ${valSql(field)} = 'null'::jsonb)`;
  return `(${rankSql(field)} = ${RANK[kind]} AND ${strSql(field)} = '' AND ${valSql(field)} = ${operandParam(operand, asJson, statement, '::jsonb')})`;
}

function operatorSql(field: string, op: string, operand: unknown, statement: Statement): string {
  switch (op) {
    case '$eq':
      return equalsSql(field, operand as Scalar | Param, statement);
    case '$ne':
      // Every expression is total (never NULL), so NOT is too: a missing field is unequal to any value but null.
      return `NOT ${equalsSql(field, operand as Scalar | Param, statement)}`;
    case '$in':
      return inSql(field, operand, statement);
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return rangeSql(field, { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op], operand as Scalar | Param, statement);
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

function inSql(field: string, operand: unknown, statement: Statement): string {
  if (!Array.isArray(operand) || operand.some(isParam)) throw new Error('$in takes a list of values, not a prepared parameter');
  const values = operand as Scalar[];
  const strings = [...new Set(values.filter((v): v is string => typeof v === 'string'))];
  const numbers = [...new Set(values.filter((v): v is number => typeof v === 'number'))];
  const others = [...new Set(values.filter((v) => typeof v !== 'string' && typeof v !== 'number'))];
  const parts: string[] = [];
  // One parameter for each list, however long (a history clear names every item).
  if (field === '_id') {
    if (strings.length) parts.push(`id = ANY(${statement.add(strings, '::text[]')})`);
  } else {
    if (strings.length) parts.push(`(${rankSql(field)} = 2 AND ${strSql(field)} = ANY(${statement.add(strings, '::text[]')}))`);
    if (numbers.length)
      parts.push(`(${rankSql(field)} = 1 AND ${valSql(field)} = ANY(${statement.add(numbers.map(asJson), '::jsonb[]')}))`);
    for (const value of others) parts.push(equalsSql(field, value, statement));
  }
  return parts.length === 0 ? 'false' : `(${parts.join(' OR ')})`;
}

/** Only values of the operand's type compare (MongoDB's type bracketing); a null operand matches nothing (filter.ts). */
function rangeSql(field: string, op: string, operand: Scalar | Param, statement: Statement): string {
  const kind = typeOf(operand);
  if (kind === null) return 'false';
  if (field === '_id') return kind === 'string' ? `id ${op} ${operandParam(operand, same, statement, '::text')}` : 'false';
  if (kind === 'string') return `(${rankSql(field)} = 2 AND ${strSql(field)} ${op} ${operandParam(operand, same, statement, '::text')})`;
  return `(${rankSql(field)} = ${RANK[kind]} AND ${strSql(field)} = '' AND ${valSql(field)} ${op} ${operandParam(operand, asJson, statement, '::jsonb')})`;
}

/** ORDER BY for a sort: each field's expressions, as its indexes have them, so an index in that order serves it. */
export function orderSql(sort: Sort | undefined): string {
  if (!sort || Object.keys(sort).length === 0) return '';
  return ` ORDER BY ${Object.entries(sort)
    .flatMap(([field, direction]) => keySql(field).map((expression) => `${expression} ${direction === -1 ? 'DESC' : 'ASC'}`))
    .join(', ')}`;
}

/** A condition's parameters with its params' values in place (each checked against its declared type). */
export function bindValues(params: readonly unknown[], values: Readonly<Record<string, Scalar>>): unknown[] {
  return params.map((p) => (p instanceof Bound ? p.as(paramValue(p.param, values)) : p));
}

/** The fields a filter names, in its branches too. */
export function fieldsOf(filter: Filter | PreparedFilter): string[] {
  return Object.entries(filter).flatMap(([key, condition]) =>
    condition === undefined ? [] : key === '$or' || key === '$and' ? (condition as Filter[]).flatMap(fieldsOf) : [key],
  );
}
