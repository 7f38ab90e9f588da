import { Router } from 'express';
import type { Authenticator, Identity } from '@udp/auth';
import { type Route, changesApi } from '@udp/contracts';
import { type RouteHandler, mountRoute, routeHandler } from '@udp/http-kit';
import type { StreamRoute } from '../gateway';
import { authenticateCaller } from '../edge-checks';
import type { CursorCodec } from './cursor';
import type { ChangeHub } from './hub';
import { STREAM_HEADERS } from './stream';
import type { TicketIssuer } from './tickets';

export interface ChangesRouterOptions {
  hub: ChangeHub;
  tickets: TicketIssuer;
  cursors: CursorCodec;
  authenticator: Authenticator;
}

/**
 * `GET /api/changes` and `POST /api/changes/ticket` (docs/live-sync.md). Every refusal is a problem+json before the
 * stream starts: credentials or ticket (401), a cursor that is not this user's (400), the process's cap (503).
 */
export function changesRouter({ hub, tickets, cursors, authenticator }: ChangesRouterOptions): Router {
  const router = Router();
  mountRoute(router, changesApi.ticket, async (_input, req, res) => {
    const { userId } = (res.locals.caller as Identity | undefined) ?? (await authenticateCaller(authenticator, req));
    res.setHeader('cache-control', 'no-store');
    res.json(tickets.issue(userId));
  });
  // Here for HEAD and for a gateway made without `changesStream`; a GET is served beside the router.
  mountRoute(router, changesApi.stream, openStream({ hub, tickets, cursors, authenticator }));
  return router;
}

/**
 * `GET /api/changes` as the gateway serves it, beside its router (createGateway's `streams`): an open stream keeps
 * nothing of the router's dispatch.
 */
export function changesStream(options: ChangesRouterOptions): StreamRoute {
  return { method: 'GET', path: changesApi.stream.path, handler: routeHandler(changesApi.stream, openStream(options)) };
}

type StreamHandler = typeof changesApi.stream extends Route<infer P, infer Q, infer B> ? RouteHandler<P, Q, B> : never;

function openStream({ hub, tickets, cursors, authenticator }: ChangesRouterOptions): StreamHandler {
  return async ({ query }, req, res) => {
    // A ticket stands for the header only when no header is sent: credentials sent are always checked.
    // (The gateway's edge has verified credentials sent, for the limit per user: res.locals.caller.)
    const caller = res.locals.caller as Identity | undefined;
    const byTicket = caller === undefined && query.ticket !== undefined && req.header('authorization') === undefined;
    const userId = caller?.userId ?? (byTicket ? tickets.userOf(query.ticket!) : (await authenticateCaller(authenticator, req)).userId);
    // EventSource sends Last-Event-ID by itself when it reconnects; a page that opens one anew passes its stored cursor.
    // The header wins: the query is not even read when it is sent.
    const header = req.header('last-event-id');
    const [cursor, field] = header ? [header, 'Last-Event-ID'] : [query.last_event_id, 'last_event_id'];
    const positions = cursor === undefined ? undefined : cursors.decode(userId, cursor, field);
    // HEAD: the answer GET would start with, and no stream (one would stay open with nothing to send).
    if (req.method === 'HEAD') return void res.writeHead(200, STREAM_HEADERS).end();
    // Every refusal before the ticket is spent: a ticket is used up only by a stream that opens.
    hub.refuseToOpen(userId);
    if (byTicket) await tickets.redeem(query.ticket!);
    await hub.openStream(userId, res, positions);
  };
}
