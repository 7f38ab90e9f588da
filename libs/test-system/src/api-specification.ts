import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import type { OwnedStream } from '@udp/eventsourcing';
import { MemoryEventStore, type EventStore, type RecordedEvent } from '@udp/eventstore';
import { type ServiceUnderTest, type TestSystem, startTestSystem } from './system';

/**
 * API specs in the shape of Emmett's ApiSpecification: given the events already in some streams, when a request
 * goes through the real gateway, then the answer and the events the request appended.
 *
 *   spec.given(historyStream('alice'), [recorded]).when({ as: 'alice', method: 'post', path, body })
 *     .then({ status: 200, body: {...}, events: [{ type: 'HistoryItemRecorded', data: {...} }] })
 *
 * Each `then` starts the gateway and the service on a fresh store seeded with the given events (the service
 * starts after the seeding, so its projectors have caught up before the request), sends the request, checks,
 * and stops everything. The first stream given is the subject: `events` are what the request appended to it; every
 * other stream given must be left as it was (e.g. another user's).
 */

/** An event as a decider writes it. */
export interface SpecEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A stream by name, or with the owner its events record (the stream functions of each `domain/aggregate.ts`). */
export type SpecStream = string | { id: string; owner?: OwnedStream['owner'] };

export interface SpecRequest {
  /** The user whose token the request carries; none: no authorization header. */
  as?: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  query?: Record<string, string | string[]>;
  /** Sent as JSON; nothing sent when undefined. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface SpecExpectation<E extends SpecEvent> {
  status: number;
  /** The answer's body, compared with `toEqual` (jest's asymmetric matchers allowed); not checked when absent. */
  body?: unknown;
  /** The events appended to the subject stream, in order (type and data; `[]`: none). */
  events: E[];
}

export interface ApiSpecification<E extends SpecEvent> {
  given(stream: SpecStream, events?: E[]): Given<E>;
}

export interface Given<E extends SpecEvent> {
  /** Another stream to seed; the request must not change it. */
  and(stream: SpecStream, events?: E[]): Given<E>;
  when(request: SpecRequest): When<E>;
}

export interface When<E extends SpecEvent> {
  /** Runs the scenario and checks it; resolves with the answer for further checks. */
  then(expected: SpecExpectation<E>): Promise<Response>;
}

export interface ApiSpecificationOptions {
  /** The store the given events are written to and the service runs on (default: a fresh memory store). */
  eventStore?: () => EventStore;
}

interface Seed<E> {
  stream: SpecStream;
  events: E[];
}

const streamIdOf = (stream: SpecStream) => (typeof stream === 'string' ? stream : stream.id);
const ownerOf = (stream: SpecStream) => (typeof stream === 'string' ? undefined : stream.owner);

/** A given/when/then specification of one service's HTTP API, its events typed `E`. */
export function apiSpecification<E extends SpecEvent>(
  service: ServiceUnderTest,
  options: ApiSpecificationOptions = {},
): ApiSpecification<E> {
  const given = (seeds: Array<Seed<E>>): Given<E> => ({
    and: (stream, events = []) => {
      // One seed per stream: a second would hide the first's revision from the checks.
      if (seeds.some((s) => streamIdOf(s.stream) === streamIdOf(stream))) throw new Error(`stream ${streamIdOf(stream)} is given twice`);
      return given([...seeds, { stream, events }]);
    },
    when: (request) => ({ then: (expected) => run(service, options, seeds, request, expected) }),
  });
  return { given: (stream, events = []) => given([{ stream, events }]) };
}

async function run<E extends SpecEvent>(
  service: ServiceUnderTest,
  options: ApiSpecificationOptions,
  seeds: Array<Seed<E>>,
  request: SpecRequest,
  expected: SpecExpectation<E>,
): Promise<Response> {
  const store = options.eventStore?.() ?? new MemoryEventStore();
  const seeded = new Map<string, number>();
  for (const { stream, events } of seeds) {
    const owner = ownerOf(stream);
    const streamId = streamIdOf(stream);
    if (events.length > 0) {
      const toAppend = events.map((e) => ({
        id: randomUUID(),
        type: e.type,
        data: e.data,
        ...(owner && { metadata: { owner } }),
      }));
      await store.appendToStream(streamId, toAppend, { expectedRevision: 'any' });
    }
    seeded.set(streamId, (await store.readStream(streamId)).revision);
  }

  const system = await startTestSystem([{ ...service, adapters: { ...service.adapters, store } }]);
  try {
    const res = await send(system, request);
    // Status and body compared together, so a wrong status shows the problem the service answered.
    expect({ status: res.status, body: res.body }).toEqual({
      status: expected.status,
      body: 'body' in expected ? expected.body : res.body,
    });

    const [subject, ...others] = seeds.map((s) => s.stream);
    const appended = await appendedSince(store, streamIdOf(subject), seeded.get(streamIdOf(subject))!);
    expect(appended.map(typeAndData)).toEqual(expected.events);
    // The command handler records the owner on every event it appends.
    const owner = ownerOf(subject);
    if (owner) for (const event of appended) expect(event.metadata.owner).toEqual(owner);
    for (const other of others) {
      const untouched = await appendedSince(store, streamIdOf(other), seeded.get(streamIdOf(other))!);
      expect({ stream: streamIdOf(other), appended: untouched.map(typeAndData) }).toEqual({ stream: streamIdOf(other), appended: [] });
    }
    return res;
  } finally {
    await system.stop();
  }
}

const typeAndData = ({ type, data }: RecordedEvent) => ({ type, data });

async function appendedSince(store: EventStore, streamId: string, revision: number): Promise<RecordedEvent[]> {
  return (await store.readStream(streamId, { fromRevision: revision + 1 })).events;
}

async function send(system: TestSystem, request: SpecRequest): Promise<Response> {
  let test = system.http[request.method](request.path);
  if (request.as !== undefined) test = test.set('authorization', await system.auth(request.as));
  for (const [name, value] of Object.entries(request.headers ?? {})) test = test.set(name, value);
  if (request.query) test = test.query(request.query);
  if (request.body !== undefined) test = test.set('content-type', 'application/json').send(JSON.stringify(request.body));
  return test;
}

/**
 * Events as a store would hand them to a projection: one stream, revisions from `fromRevision`, positions
 * following, the owner recorded as the command handler does (for projection specs).
 */
export function recordedEvents(
  stream: SpecStream,
  events: SpecEvent[],
  fromRevision = 0,
  fromPosition = BigInt(fromRevision + 1),
): RecordedEvent[] {
  const owner = ownerOf(stream);
  return events.map((event, i) => ({
    id: randomUUID(),
    streamId: streamIdOf(stream),
    revision: fromRevision + i,
    position: fromPosition + BigInt(i),
    type: event.type,
    data: event.data,
    metadata: owner ? { owner } : {},
    createdAt: 0,
  }));
}
