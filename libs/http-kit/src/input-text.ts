import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { type FieldProblem, HttpError, badRequest } from './problem';

/*
 * What a request says is kept exactly as it was meant, or refused: 400 naming the field (docs/architecture.md,
 * "Strings"). Decoded leniently, a lone surrogate, a `%FF` or a byte that is not UTF-8 becomes U+FFFD somewhere
 * on its way (SQLite, a JSON answer, a cursor), so two ids meant as different become one (issue 27 #6), and a
 * number past the doubles becomes Infinity, stored as null. Checked once, at the edge every service shares
 * (service-edge.ts), in time linear in the request's bounded size.
 */

const refused = (field: string, message: string) => badRequest(`invalid input: ${field}: ${message}`, [{ field, message }]);

/** A lone surrogate (`\ud800` without its pair): with the `u` flag, a pair is one code point and never matches. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;
const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);
/** A string that holds a lone surrogate is no Unicode text. */
const NOT_TEXT = 'must be well-formed Unicode text (it holds a lone surrogate)';

/**
 * The query string as the API reads it: every name and value percent-decodes to UTF-8 text (`%FF`, `%E0%A4%A` and
 * an encoded surrogate are refused, where the query parser would read them as U+FFFD or keep them raw), and no name
 * asks for an array or an object (`limit[]=1`: the API takes every parameter once, so such a name would only be
 * ignored). A repeated scalar (`limit=1&limit=2`) is refused by the route's schema, which then sees an array.
 */
export function refuseIllFormedQuery(req: Request, _res: Response, next: NextFunction): void {
  const url = req.url;
  const start = url.indexOf('?');
  if (start < 0 || start === url.length - 1) return next();
  for (const pair of url.slice(start + 1).split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const rawName = equals < 0 ? pair : pair.slice(0, equals);
    const name = decodeQueryPart(rawName);
    if (name === undefined) return next(refused(rawName, 'the name holds a malformed percent-encoding or bytes that are not UTF-8'));
    if (/[[\]]/.test(name)) {
      const plain = name.slice(0, name.indexOf('[')) || name;
      return next(refused(name, `array and object parameters are not supported: give ${plain}=<value> once`));
    }
    if (equals >= 0 && decodeQueryPart(pair.slice(equals + 1)) === undefined) {
      return next(refused(name, 'the value holds a malformed percent-encoding or bytes that are not UTF-8'));
    }
  }
  next();
}

/** A name or value of a query string, decoded as the query parser does (`+` is a space), or undefined if not text. */
function decodeQueryPart(raw: string): string | undefined {
  const text = raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  // decodeURIComponent throws on a malformed escape and on escapes that are not UTF-8 (surrogates included);
  // characters outside ASCII reach a URL only as escapes (Node's parser refuses them raw).
  if (!text.includes('%')) return isWellFormed(text) ? text : undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * body-parser's `verify`: a JSON body is UTF-8 (RFC 8259) and must be, not read with U+FFFD in it. Another charset
 * is 415: body-parser would decode UTF-16 and UTF-32 too, the latter's invalid code points as U+FFFD.
 */
export function refuseNonUtf8Body(_req: IncomingMessage, _res: unknown, raw: Buffer, charset: string): void {
  if (charset.toLowerCase() !== 'utf-8') {
    throw new HttpError(415, 'Unsupported Media Type', `a JSON body is UTF-8; charset ${charset} is not supported`);
  }
  if (!isUtf8(raw)) throw refused('body', 'must be UTF-8 text');
}

/**
 * A string, key or number of a parsed JSON body that cannot be kept as sent, or undefined: a lone surrogate (from
 * a `\ud800` escape), or a number that overflowed to ±Infinity (`1e309`, which JSON would store as null). Walked
 * without recursion (a body may nest deeper than the stack); scalars are checked in place and a field is named
 * only for a container or a problem, so the walk costs less than the parse before it.
 */
export function illFormedJsonValue(body: unknown): FieldProblem | undefined {
  if (body === null || typeof body !== 'object') {
    const message = scalarProblem(body);
    return message === undefined ? undefined : { field: 'body', message };
  }
  // Breadth first, so that of two problems the shallower, then the earlier, is named. Each container remembers its
  // parent and its key there: its name is built only for a problem (built for each, they would cost the square of
  // the depth).
  const containers: unknown[] = [body];
  const parents: number[] = [-1];
  const keys: Array<string | number> = [''];
  const fieldOf = (container: number, key: string | number) => {
    let field = memberName(key);
    for (let at = container; at > 0; at = parents[at]) field = memberName(keys[at]) + field;
    return field.startsWith('.') ? field.slice(1) : field;
  };
  for (let next = 0; next < containers.length; next++) {
    const container = containers[next] as Record<string, unknown> | unknown[];
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const value = container[i];
        if (value !== null && typeof value === 'object') {
          containers.push(value);
          parents.push(next);
          keys.push(i);
          continue;
        }
        const message = scalarProblem(value);
        if (message) return { field: fieldOf(next, i), message };
      }
      continue;
    }
    for (const key in container) {
      if (!isWellFormed(key)) return { field: fieldOf(next, key), message: KEY_NOT_TEXT };
      const value = container[key];
      if (value !== null && typeof value === 'object') {
        containers.push(value);
        parents.push(next);
        keys.push(key);
        continue;
      }
      const message = scalarProblem(value);
      if (message) return { field: fieldOf(next, key), message };
    }
  }
  return undefined;
}

const KEY_NOT_TEXT = 'the key must be well-formed Unicode text (it holds a lone surrogate)';
/** One step of a field's name as the route schemas write it (`data[1].item_id`); a lone surrogate shown as U+FFFD. */
function memberName(key: string | number): string {
  return typeof key === 'number' ? `[${key}]` : `.${key.replace(LONE_SURROGATES, '\uFFFD')}`;
}

function scalarProblem(value: unknown): string | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : NOT_TEXT;
  if (typeof value === 'number' && !Number.isFinite(value))
    return 'must be a number a double can hold (at most about 1.8e308 in magnitude)';
  return undefined;
}

/** The 400 for a parsed body that `illFormedJsonValue` refuses, or undefined. */
export function illFormedJsonBody(body: unknown): HttpError | undefined {
  const problem = illFormedJsonValue(body);
  return problem && refused(problem.field, problem.message);
}
