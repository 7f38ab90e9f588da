import { createHmac, timingSafeEqual } from 'node:crypto';
import { CHANGE_CURSOR_PATTERN } from '@udp/contracts';
import { badRequest } from '@udp/http-kit';

/** Where a stream stands in each area's change order: history's sync position (its `sync_token`), the playlists' revision. */
export interface ChangePositions {
  history: string;
  playlist: number;
}

const MAC_BYTES = 16;

/**
 * An event's `id`: the positions, with a MAC over the user and the positions (a key every gateway replica derives from
 * INTERNAL_AUTH_SECRET), so a cursor is good for its own user only and cannot be altered: another user's cursor, or
 * one made up, is a 400 rather than a stream that starts somewhere it should not.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(userId: string, positions: ChangePositions): string {
    const payload = Buffer.from(JSON.stringify({ h: positions.history, p: positions.playlist }), 'utf8');
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
    const { h: history, p: playlist } = parsed as { h?: unknown; p?: unknown };
    if (typeof history !== 'string' || typeof playlist !== 'number' || !Number.isSafeInteger(playlist) || playlist < 0) throw refuse();
    return { history, playlist };
  }

  private mac(userId: string, payload: Buffer): Buffer {
    // The user id's length first: no (user, payload) pair can be read as another.
    return createHmac('sha256', this.key).update(`${userId.length}:${userId}`).update(payload).digest().subarray(0, MAC_BYTES);
  }
}
