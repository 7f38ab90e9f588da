import { createHash, createHmac } from 'node:crypto';
import type { Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { slicedWorkWaiting } from '@udp/retry';

/**
 * Answers `body` as JSON with an ETag of its bytes; when the request's `If-None-Match` names it, 304 without a body.
 * For lists a client polls (history, playlists): an unchanged list costs no transfer and no client parsing.
 * The body is serialised once, here. Weak ETag (`W/`): the same JSON, whatever the compression on the way.
 * `Cache-Control: private, no-cache`: a client keeps the answer but asks again each time (it changes with writes).
 */
export function sendJsonConditionally(req: Request, res: Response, body: unknown): void {
  sendJsonTextConditionally(req, res, () => JSON.stringify(body));
}

/**
 * The same, for an answer serialised by the caller (`text`, called at most once). Given `versionTag` (a tag of a
 * version the caller vouches for, from `versionTagger`: the same version always answers the same bytes), the ETag is
 * that tag instead of a hash of the bytes, and a 304 serialises nothing.
 */
export function sendJsonTextConditionally(req: Request, res: Response, text: () => string, versionTag?: string): void {
  const json = versionTag === undefined ? text() : undefined;
  const etag = `W/"${versionTag ?? digest(json!)}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, no-cache');
  if (noneMatchNames(req.header('if-none-match'), etag)) {
    res.status(304);
    endWithTheTurn(res);
    return;
  }
  const body = json ?? text();
  // Not Express's `send`: it turns a text of 1,000 characters or more into a Buffer, which node then writes apart
  // from the headers (two chunks, one writev); handed a string, node writes headers and body as one.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  endWithTheTurn(res, body);
}

/**
 * Ends `res` (with `body`) in this turn's check phase, with every other answer made ready in the same turn, rather than
 * at once. Answers written one by one each wake their reader when it waits on the same host (a proxy or load balancer
 * beside the process, a local client): a wake-up of another core, about 15-30 µs of this thread's CPU a write. Written
 * together, the first write wakes the reader and the others find it awake. Measured on loopback (docs/performance.md,
 * "Answers written together"): a kept page of 100 served 45% faster, a poll 50%, with no longer p99. The wait is the
 * rest of the turn's poll phase; while sliced work waits (libs/retry, time-slices.ts) the answer is ended at once.
 */
export function endWithTheTurn(res: Response, body?: string): void {
  // With sliced work waiting, the check phase resumes its slice before this answer: beside two users' 5,000-entry
  // batches the readers' median went from 4 to 7 ms. Then the answer goes at once.
  if (slicedWorkWaiting()) return end(res, body);
  setImmediate(() => end(res, body));
}

function end(res: Response, body: string | undefined): void {
  try {
    res.end(body);
  } catch (error) {
    // Not the process's end: this answer's connection is closed instead.
    res.destroy(error as Error);
  }
}

const digest = (value: string) => createHash('sha1').update(value).digest('base64url');

/**
 * Tags versions with a key: an HMAC, so that a tag tells nothing of its version (a store position counts every
 * user's changes; an unkeyed hash of it could be found again by trying positions), only whether it changed. Every
 * process given the same key makes the same tags (replicas behind one load balancer agree). Each version is tagged
 * once (LRU): reads repeat the same versions, and a hash object is costly (docs/performance.md).
 */
export function versionTagger(key: Buffer): (version: string) => string {
  const tags = new LRUCache<string, string>({ max: 10_000 });
  return (version) => {
    let tag = tags.get(version);
    if (tag === undefined) tags.set(version, (tag = `v${createHmac('sha256', key).update(version).digest('base64url')}`));
    return tag;
  };
}

/** RFC 9110 §13.1.2: weak comparison; `*` matches any current representation. */
function noneMatchNames(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.slice(2);
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === opaque || t === `W/${opaque}`;
  });
}
