import { z } from './zod';

/** Milliseconds since the epoch (DESIGN.md: dates are integers). */
export const EpochMillis = z.number().int().min(0).max(8_640_000_000_000_000);

/** An integer in a query string, e.g. `after=1700000000000`. */
export const queryInteger = (name: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d{1,16}$/, `${name} must be a non-negative integer`)
    .transform(Number)
    .refine((n) => n <= max, `${name} must be at most ${max}`);

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
  })
  .openapi('ProblemDetails');
