import type { NextFunction, Request, Response } from 'express';
import { badRequest } from './problem';

/**
 * A path whose percent-escapes do not decode (`%ff`, `%E0%A4%A`, an encoded lone surrogate) names no resource:
 * 400 before any route or parameter decoding sees it, in the gateway and in every service alike. (A request the
 * embedded gateway hands over in process passed its check already; checking the same path again costs well
 * under a microsecond.)
 */
export function rejectUndecodablePath(req: Request, _res: Response, next: NextFunction): void {
  try {
    decodeURIComponent(req.path);
  } catch {
    return next(badRequest('the path holds a malformed percent-encoding', [{ field: 'path', message: 'malformed percent-encoding' }]));
  }
  next();
}
