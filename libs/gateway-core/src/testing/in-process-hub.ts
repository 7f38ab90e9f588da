import type { InternalIdentity } from '@udp/auth';
import type { Bus } from '@udp/bus';
import type { InternalReads } from '@udp/http-kit';
import type { Logger } from '@udp/telemetry';
import type { CursorCodec } from '../changes/cursor';
import { type ChangeHubOptions, ChangeHub } from '../changes/hub';
import { inProcessServiceGet } from '../changes/service-get';

/** Tests' hub: its four services are the in-process reads given (at http://history, …), none over HTTP. */
export function inProcessHub(
  parts: { bus: Bus; identity: InternalIdentity; cursors: CursorCodec; logger: Logger; services: Record<string, InternalReads> },
  options: Pick<ChangeHubOptions, 'limits' | 'charge'>,
): ChangeHub {
  return new ChangeHub({
    bus: parts.bus,
    historyUrl: 'http://history',
    playlistUrl: 'http://playlist',
    preferenceUrl: 'http://preference',
    profileUrl: 'http://profile',
    identity: parts.identity,
    serviceGet: inProcessServiceGet(parts.services, () => Promise.reject(new Error('no service over HTTP here'))),
    cursors: parts.cursors,
    logger: parts.logger,
    ...options,
  });
}
