import type { NextFunction, Request, Response } from 'express';
import { AuthenticationError, type Authenticator, type Identity } from '@udp/auth';
import { HttpError, unauthorized } from '@udp/http-kit';

/** The caller of a request's credentials: refused credentials are a 401, an identity provider that cannot tell a 503. */
export async function authenticateCaller(authenticator: Authenticator, req: Request): Promise<Identity> {
  try {
    return await authenticator.authenticate(req.header('authorization'), req.header('token-type'));
  } catch (error) {
    throw error instanceof AuthenticationError
      ? unauthorized(error.message)
      : new HttpError(503, 'Service Unavailable', 'cannot verify credentials now');
  }
}

/** Routes after this need a caller; it lands in res.locals.caller. */
export function authenticate(authenticator: Authenticator) {
  return (req: Request, res: Response, next: NextFunction) => {
    authenticateCaller(authenticator, req).then((caller) => {
      res.locals.caller = caller;
      next();
    }, next);
  };
}
