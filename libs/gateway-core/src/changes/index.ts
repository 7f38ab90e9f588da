export { CursorCodec, type ChangePositions } from './cursor';
export { ChangeHub, type ChangeHubOptions, type ChangeLimits } from './hub';
export { changesRouter, changesStream } from './routes';
export { TICKET_TTL_S, TicketIssuer } from './tickets';
export { LocalRedeemedTickets, type RedeemedTickets, SharedRedeemedTickets } from './redeemed-tickets';
export { SharedStreamRegistry, STREAM_REPLACED_TOPIC, type StreamRegistry } from './stream-registry';
export { type ServiceGet, httpServiceGet, inProcessServiceGet } from './service-get';
