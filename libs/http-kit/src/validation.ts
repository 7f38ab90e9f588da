import type { z } from 'zod';
import { badRequest, type FieldProblem } from './problem';

/** Validates input from outside with a contracts schema; a failure is a 400 naming every offending field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: FieldProblem[] = result.error.issues.map((issue) => ({
    field: issue.path.length ? formatPath(issue.path) : where,
    message: issue.message,
  }));
  throw badRequest(`invalid ${where}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
}

function formatPath(path: PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');
}
