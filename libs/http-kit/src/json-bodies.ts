import express, { type NextFunction, type Request, type Response } from 'express';
import { HttpError } from './problem';

/**
 * JSON bodies only, bounded in size. A body in another content type is 415, a larger one 413, malformed
 * JSON 400: all as problem+json from the error handler.
 */
export function jsonBodies(maxBytes: number) {
  const parse = express.json({ limit: maxBytes, type: () => true, strict: false });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) return next();
    if (!req.is(['application/json', 'application/*+json'])) {
      return next(
        new HttpError(415, 'Unsupported Media Type', `expected Content-Type application/json, got ${req.header('content-type') ?? 'none'}`),
      );
    }
    return parse(req, res, next);
  };
}

function hasBody(req: Request): boolean {
  const length = req.header('content-length');
  return (length !== undefined && length !== '0') || req.header('transfer-encoding') !== undefined;
}
