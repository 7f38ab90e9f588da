import type { NextFunction, Request, Response } from 'express';
import { unauthorized } from './problem';

/** Routes after this need a caller the gateway vouched for (`acceptFromGateway` put it in res.locals.userId). */
export function requireCaller(_req: Request, res: Response, next: NextFunction): void {
  if (typeof res.locals.userId !== 'string') return next(unauthorized('no valid caller identity'));
  next();
}

export function userIdOf(res: Response): string {
  const userId = res.locals.userId;
  if (typeof userId !== 'string') throw unauthorized('no caller identity');
  return userId;
}
