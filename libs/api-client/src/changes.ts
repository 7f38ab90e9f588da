import type { components } from './openapi.generated';

type Schemas = components['schemas'];

/** An event of `GET /api/changes`, typed by its name (the data schemas of the OpenAPI document). */
export type ChangeEvent =
  | { event: 'ready'; id: string; data: Schemas['ReadyChange'] }
  | { event: 'history'; id: string; data: Schemas['HistoryChange'] }
  | { event: 'playlist'; id: string; data: Schemas['PlaylistChange'] }
  | { event: 'preference'; id: string; data: Schemas['PreferenceChange'] }
  | { event: 'profile'; id: string; data: Schemas['ProfileChange'] }
  | { event: 'erasure'; id?: string; data: Schemas['ErasureChange'] }
  | { event: 'close'; id?: string; data: Schemas['CloseChange'] };

/** One Server-Sent Event as the wire gives it (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface ServerSentEvent {
  event: string;
  data: string;
  /** The `id` field of this event, if it had one (the cursor to resume after). */
  id?: string;
}

/**
 * Parses a text/event-stream body: fields by line (`\n`, `\r\n` or `\r`), a blank line ends an event, comments (`:`,
 * the heartbeats) and `retry` are skipped, several `data` lines are joined with `\n`. For Node and native apps, where
 * no EventSource exists; a browser uses its own EventSource (docs/live-sync.md).
 */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = { name: '', data: [] as string[], id: undefined as string | undefined };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = buffer.search(/\r\n|\r|\n/);
      // A `\r` at the very end may be the first half of `\r\n`: wait for the next chunk.
      if (end === -1 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        if (event.data.length > 0)
          yield { event: event.name || 'message', data: event.data.join('\n'), ...(event.id !== undefined && { id: event.id }) };
        event = { name: '', data: [], id: undefined };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'event') event.name = value;
      else if (field === 'data') event.data.push(value);
      else if (field === 'id' && !value.includes('\0')) event.id = value;
    }
  }
}

export interface OpenChangesOptions {
  /** `Bearer <token>` or `sessionToken <token>`; or a `ticket` instead. */
  authorization?: string;
  ticket?: string;
  /** The id of the last event received: the stream sends every change after it. */
  lastEventId?: string;
  signal?: AbortSignal;
}

/** A change stream: `events` yields each event with its data parsed; a refusal is the problem+json in `problem`. */
export interface ChangeStreamAnswer {
  response: Response;
  events: AsyncGenerator<ChangeEvent>;
  problem?: { status: number; title: string; detail: string; [field: string]: unknown };
}

/** Opens `GET /api/changes` with fetch (Node 20+, native apps), for a client that has no EventSource. */
export async function openChangeStream(baseUrl: string, options: OpenChangesOptions = {}): Promise<ChangeStreamAnswer> {
  const url = new URL('/api/changes', baseUrl);
  if (options.ticket !== undefined) url.searchParams.set('ticket', options.ticket);
  const response = await fetch(url, {
    headers: {
      accept: 'text/event-stream',
      ...(options.authorization !== undefined && { authorization: options.authorization }),
      ...(options.lastEventId !== undefined && { 'last-event-id': options.lastEventId }),
    },
    signal: options.signal,
  });
  if (!response.ok || !response.body) {
    const problem = (await response
      .json()
      .catch(() => ({ status: response.status, title: response.statusText, detail: '' }))) as ChangeStreamAnswer['problem'];
    return { response, events: (async function* () {})(), problem };
  }
  const body = response.body;
  async function* events(): AsyncGenerator<ChangeEvent> {
    for await (const e of serverSentEvents(body))
      yield { event: e.event, ...(e.id !== undefined && { id: e.id }), data: JSON.parse(e.data) } as ChangeEvent;
  }
  return { response, events: events() };
}
