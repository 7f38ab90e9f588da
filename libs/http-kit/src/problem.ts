import type { Response } from 'express';

export interface FieldProblem {
  field: string;
  message: string;
}

/** An error with an HTTP status; rendered as RFC 9457 problem+json by the error handler. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly errors?: FieldProblem[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

export const badRequest = (detail: string, errors?: FieldProblem[]) => new HttpError(400, 'Bad Request', detail, errors);
export const unauthorized = (detail: string) => new HttpError(401, 'Unauthorized', detail, undefined, { 'www-authenticate': 'Bearer' });
export const forbidden = (detail: string) => new HttpError(403, 'Forbidden', detail);
export const notFoundError = (detail: string) => new HttpError(404, 'Not Found', detail);

const TYPE_BASE = 'https://problems.udp.example/';

export function sendProblem(res: Response, status: number, title: string, detail: string, extra: Record<string, unknown> = {}): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: `${TYPE_BASE}${slug(title)}`, title, status, detail, ...extra }));
}

function slug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The erasure boundary's refusal (docs/erasure.md): problem type `https://problems.udp.example/erasure-pending`. */
export const ERASURE_PENDING_TITLE = 'Erasure Pending';
/** Seconds a refused caller is asked to wait (an embedded erasure of 50,000 entries takes about 3 s). */
const ERASURE_PENDING_RETRY_S = 2;

/** 409: the user's data is being erased; the gateway's hold and each service's gate answer the same. */
export const erasurePending = () =>
  new HttpError(
    409,
    ERASURE_PENDING_TITLE,
    "this user's data is being erased: nothing is read or written until the erasure completes; retry after Retry-After seconds",
    undefined,
    { 'retry-after': String(ERASURE_PENDING_RETRY_S) },
  );
