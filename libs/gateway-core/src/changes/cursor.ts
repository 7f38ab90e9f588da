import { createHmac, timingSafeEqual } from 'node:crypto';
import { CHANGE_CURSOR_PATTERN } from '@udp/contracts';
import { badRequest } from '@udp/http-kit';

/**
 * Where a stream stands in each area's change order: history's sync position (its `sync_token`), the playlists'
 * revision, the preferences' store position (decimal: one stream per key, ordered across keys by the store), the
 * profile's revision.
 */
export interface ChangePositions {
  history: string;
  playlist: number;
  preference: string;
  profile: number;
  /**
   * The user's erasure epoch when the stream opened (erasure-holds.ts): the time of their last erasure, 0 for none. A
   * cursor of an earlier epoch points into data that is gone: its stream answers `erasure`, never a partial replay.
   */
  epoch: number;
}

/** A store position as the cursor holds it (decimal, up to 2^128). */
const STORE_POSITION = /^[0-9]{1,40}$/;

const MAC_BYTES = 16;

/**
 * An event's `id`: the positions, with a MAC over the user and the positions (a key every gateway replica derives from
 * INTERNAL_AUTH_SECRET), so a cursor is good for its own user only and cannot be altered: another user's cursor, or
 * one made up, is a 400 rather than a stream that starts somewhere it should not.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(userId: string, positions: ChangePositions): string {
    const { history: h, playlist: p, preference: f, profile: r, epoch: e } = positions;
    const payload = Buffer.from(JSON.stringify({ h, p, f, r, e }), 'utf8');
    return `c1.${Buffer.concat([this.mac(userId, payload), payload]).toString('base64url')}`;
  }

  /** The positions a cursor of this user names; a 400 naming `field` for any other. */
  decode(userId: string, cursor: string, field: string): ChangePositions {
    const refuse = () =>
      badRequest(`${field} is not a cursor of this user's change stream`, [{ field, message: "not an event id of this user's stream" }]);
    if (!CHANGE_CURSOR_PATTERN.test(cursor)) throw refuse();
    const bytes = Buffer.from(cursor.slice(3), 'base64url');
    const mac = bytes.subarray(0, MAC_BYTES);
    const payload = bytes.subarray(MAC_BYTES);
    if (mac.length !== MAC_BYTES || !timingSafeEqual(mac, this.mac(userId, payload))) throw refuse();
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch {
      throw refuse();
    }
    const { h: history, p: playlist, f, r, e = 0 } = parsed as { h?: unknown; p?: unknown; f?: unknown; r?: unknown; e?: unknown };
    if (typeof history !== 'string' || !isPosition(playlist) || !isPosition(e)) throw refuse();
    // A cursor issued before preferences and the profile were streamed holds neither: the device could see none of
    // their changes by the stream, so it gets them all from the beginning (each key and the profile once, as now).
    if (f === undefined && r === undefined) return { history, playlist, preference: '0', profile: 0, epoch: e };
    if (typeof f !== 'string' || !STORE_POSITION.test(f) || !isPosition(r)) throw refuse();
    return { history, playlist, preference: f, profile: r, epoch: e };
  }

  private mac(userId: string, payload: Buffer): Buffer {
    // The user id's length first: no (user, payload) pair can be read as another.
    return createHmac('sha256', this.key).update(`${userId.length}:${userId}`).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

const isPosition = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
