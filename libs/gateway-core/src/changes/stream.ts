import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { CloseChange } from '@udp/contracts';
import type { ChangePositions } from './cursor';
import type { Area } from './hub';

/** The head of a stream's answer (and of `HEAD /api/changes`). */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // nginx and similar proxies would otherwise hold the events back in their buffers.
  'x-accel-buffering': 'no',
};

/**
 * One open `GET /api/changes`: the Server-Sent Events written to its response. What the reader has not taken stays in
 * the response's buffer; past `maxBufferBytes` (when the next event or heartbeat is due) the stream is closed (a named `close` event, then the socket), so a
 * slow or stalled reader never grows memory without bound; it resumes by `Last-Event-ID`.
 */
export class ChangeStream {
  /** Where the stream stands: the position of its last event (undefined until the first pull read the head). */
  positions: ChangePositions | undefined;
  /** Per area, a change at position `wanted - 1` was announced: pull until the service has applied up to `wanted`. */
  wanted: Record<Area, bigint> = { history: 0n, playlist: 0n, preference: 0n, profile: 0n };
  /** An event was sent since the oldest unsent announcement (the latency histogram's sample). */
  sentSinceAnnounce = false;
  /** When the oldest change announced and not yet sent was stored (for the latency histogram). */
  announcedAt: number | undefined;
  /** The user's erasure epoch when the stream opened: sealed into every cursor it gives. */
  epoch = 0;
  /** While a resume sends what it owes (until `ready`): how many more changes it may send. */
  catchUp: number | undefined;
  /** The tick of the heartbeat period that writes this stream's heartbeat (the hub's). */
  beat = 0;
  pulling: Promise<void> | null = null;
  again = false;
  closed = false;
  readonly openedAt: number;
  /** Names it among the user's streams at every replica (stream-registry.ts). */
  readonly id = randomBytes(9).toString('base64url');

  constructor(
    readonly userId: string,
    private readonly res: Response,
    private readonly maxBufferBytes: number,
    now: number,
    private readonly onClose: (stream: ChangeStream, reason: CloseChange['reason'] | 'client' | 'erasure') => void,
  ) {
    this.openedAt = now;
    res.on('close', () => this.finish('client'));
  }

  get started(): boolean {
    return this.res.headersSent;
  }

  /** The answer's head; the reconnection delay asked of EventSource (2 s) comes first. */
  private start(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, STREAM_HEADERS);
    this.res.write('retry: 2000\n\n');
  }

  send(event: string, data: unknown, id?: string): void {
    if (this.closed) return;
    // Looked at before the event is written: an event larger than the bound (a preference document may be 256 KiB)
    // still goes to a reader that has taken what came before it; one still holding more than the bound unread is
    // behind. So the buffer holds at most the bound plus one event.
    if (this.res.writableLength > this.maxBufferBytes) {
      return this.close('slow-reader', `more than CHANGES_MAX_BUFFER_BYTES (${this.maxBufferBytes}) unread: resume with the last id`);
    }
    this.start();
    // JSON has no raw line breaks, so one `data:` line holds the whole value.
    this.res.write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);
  }

  heartbeat(): void {
    if (this.closed || !this.res.headersSent) return;
    // A comment: EventSource ignores it; proxies see traffic.
    this.res.write(':\n\n');
    if (this.res.writableLength > this.maxBufferBytes) this.close('slow-reader', 'the reader took nothing for a long time');
  }

  /** Ends the stream with a `close` event saying why (every reason resumes with the last id). */
  close(reason: CloseChange['reason'], detail: string): void {
    if (this.closed) return;
    this.start();
    this.res.write(`event: close\ndata: ${JSON.stringify({ reason, detail } satisfies CloseChange)}\n\n`);
    this.end(reason);
  }

  /** Ends the stream after a last event (`erasure`): nothing more is written. */
  end(reason: CloseChange['reason'] | 'erasure'): void {
    if (this.closed) return;
    this.finish(reason);
    this.res.end();
    // A reader that takes nothing would hold the socket and its buffer: it is cut once the last bytes had time.
    // What it has not taken may sit in the socket's buffer rather than the response's (a reader that stopped reading
    // long ago): both are looked at then. A socket left holding them would keep a graceful stop waiting for ever.
    const socket = this.res.socket;
    if (socket && !socket.destroyed) {
      const cut = setTimeout(() => {
        if (!socket.destroyed && (this.res.writableLength > 0 || socket.writableLength > 0)) socket.destroy();
      }, 5000).unref();
      // A socket that closes first needs no cut: nothing of the stream runs after it.
      socket.once('close', () => clearTimeout(cut));
    }
  }

  /** Forgets a stream that never started (its request is answered with a problem instead). */
  detach(): void {
    this.finish('unavailable');
  }

  private finish(reason: CloseChange['reason'] | 'client' | 'erasure'): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this, reason);
  }
}
