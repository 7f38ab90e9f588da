import { z } from './zod';

/** Milliseconds since the epoch (docs/architecture.md, "HTTP conventions": dates are integers). */
export const EpochMillis = z.number().int().min(0).max(8_640_000_000_000_000);

/**
 * An integer in a query string, e.g. `after=1700000000000`. Documented as the integer it stands for (0 to
 * `max`), so that what the OpenAPI document allows and what the API accepts are the same.
 */
export const queryInteger = (name: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d{1,16}$/, `${name} must be a non-negative integer`)
    .transform(Number)
    .refine((n) => n <= max, `${name} must be at most ${max}`)
    .openapi({ type: 'integer', minimum: 0, maximum: max });

/** The largest int32, the range of technical ids (the spec's `int32`). */
/**
 * A name people read: no control character, and at least one character that is not white space (JavaScript's
 * `trim` set spelled out, and U+0085), as one pattern so the OpenAPI document states both rules.
 */
export const VISIBLE_NAME_PATTERN =
  /^[^\u0000-\u001f\u007f]*[^\u0000-\u0020\u007f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff][^\u0000-\u001f\u007f]*$/;

export const INT32_MAX = 2_147_483_647;
/** 0 to INT32_MAX in decimal digits (leading zeros allowed, at most 10 digits), as one pattern. */
export const INT32_DIGITS =
  '(?:[0-9]{1,9}|0[0-9]{9}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}|21474[0-7][0-9]{4}|' +
  '214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])';

/** A technical id (int32) in a path, e.g. `/api/history/42`; documented as the integer it stands for. */
export const pathInt32 = (name: string) =>
  z
    .string()
    .regex(/^\d{1,10}$/, `${name} must be an integer`)
    .transform(Number)
    .refine((n) => n <= INT32_MAX, `${name} must be an int32`)
    .openapi({ type: 'integer', minimum: 0, maximum: INT32_MAX });

/** `true` or `false` in a query string. */
export const queryBoolean = (name: string) =>
  z.enum(['true', 'false'], { message: `${name} must be true or false` }).transform((v) => v === 'true');

export const FieldProblem = z.object({ field: z.string(), message: z.string() }).openapi('FieldProblem');

/** RFC 9457 problem details: every error answer of the API. */
export const ProblemDetails = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    errors: z.array(FieldProblem).optional(),
    limit: z
      .string()
      .optional()
      .openapi({ description: '422 Quota Exceeded: the setting of the per-user quota, e.g. PREFERENCE_MAX_KEYS' }),
    max: z.number().int().optional().openapi({ description: '422 Quota Exceeded: its configured value' }),
  })
  .openapi('ProblemDetails');

/**
 * The values of the `Token-Type` header, in any letter case: the scheme of an `Authorization` value that
 * carries none. The gateway refuses any other value, or one contradicting the Authorization scheme, with 400.
 */
export const TOKEN_TYPES = ['Bearer', 'sessionToken'] as const;
const anyCase = (word: string) => [...word].map((c) => `[${c.toUpperCase()}${c.toLowerCase()}]`).join('');
export const TokenTypeHeader = z
  .string()
  .regex(new RegExp(`^(${TOKEN_TYPES.map(anyCase).join('|')})$`), `Token-Type must be ${TOKEN_TYPES.join(' or ')}`)
  .openapi({
    description: `${TOKEN_TYPES.join(' or ')} (any letter case): the scheme of the token when the Authorization value carries none`,
  });

/**
 * The one rule for every business id (history `item_id`, playlist `itemId`, `media_id`, `businessId` and the
 * ids in paths and queries that name them): 1 to 256 characters, none of them a control character (U+0000 to
 * U+001F, U+007F). A pattern, not a refinement, so the OpenAPI document states the rule too.
 */
export const BUSINESS_ID_MAX_LENGTH = 256;
export const businessId = (field: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty`, abort: true })
    .max(BUSINESS_ID_MAX_LENGTH, { error: `${field} is at most ${BUSINESS_ID_MAX_LENGTH} characters`, abort: true })
    .regex(/^[^\u0000-\u001f\u007f]*$/, `${field} must not contain control characters`);
