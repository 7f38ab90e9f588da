import type { NextFunction, Request, Response } from 'express';
import { IDENTITY_HEADER, type InternalIdentity } from '@udp/auth';
import { takeRequestId } from './request-context';

/**
 * Requests the embedded gateway hands to a service in the same process. The gateway has already given them an
 * id, a logger and an access-log line, checked the path, and authenticated the caller (here, when the route is
 * not public). Only code in this process can put a request here.
 */
const handedOver = new WeakMap<Request, { userId?: string }>();

export function handOverInProcess(req: Request, caller: { userId: string } | undefined): void {
  handedOver.set(req, { userId: caller?.userId });
}

/**
 * A service's first middleware, and the one place that asks how the request came from the gateway. Over HTTP:
 * the request id the gateway sent (echoed back) and the caller of the identity header it signed. Handed over in
 * process: the gateway's request id is kept (the gateway answers with it) and its caller is taken as it is,
 * neither signed nor verified. The caller lands in `res.locals.userId`, where `requireCaller` looks for it.
 * `identity` is absent in a service that has public routes only.
 */
export function acceptFromGateway(identity: InternalIdentity | undefined) {
  return (req: Request, res: Response, next: NextFunction) => {
    const handed = handedOver.get(req);
    if (handed) {
      if (handed.userId) res.locals.userId = handed.userId;
      return next();
    }
    takeRequestId(req, res);
    const verified = identity?.verify(req.header(IDENTITY_HEADER));
    if (verified) res.locals.userId = verified.userId;
    next();
  };
}
