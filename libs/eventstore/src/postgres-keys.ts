import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Crypto-shredding for the PostgreSQL event store (postgres.ts, "Erasure"): each stream has a random AES-256-GCM key
 * of its own, kept in `udp_stream_keys` and deleted with the stream; its events' `data` and `metadata` are stored
 * sealed with it. Deleted rows stay in PostgreSQL's pages and WAL, but without the key they are noise; the key row
 * itself is made unreadable by `scrubKeys` (a rewrite of the small keys table, then the WAL segments that held it
 * removed).
 */

/** Sealed text: this prefix, then base64 of key id (8 bytes) | IV (12) | tag (16) | ciphertext. JSON starts with `{`. */
const SEALED = 'e1:';
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface StreamKey {
  /** Not secret: names the key in each sealed value, so a value of a stream deleted and begun again is told apart. */
  id: bigint;
  key: Buffer;
}

export function freshKey(): StreamKey {
  // 63 bits: a positive bigint column.
  return { id: randomBytes(KEY_ID_BYTES).readBigUInt64BE() >> 1n, key: randomBytes(32) };
}

export function seal(plain: string, key: StreamKey): string {
  return SEALED + sealBytes(Buffer.from(plain, 'utf8'), key).toString('base64');
}

/** Bytes sealed with `key`: key id (8 bytes) | IV (12) | tag (16) | ciphertext. */
export function sealBytes(plain: Buffer, key: StreamKey): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  const head = Buffer.alloc(KEY_ID_BYTES);
  head.writeBigUInt64BE(key.id);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([head, iv, cipher.getAuthTag(), body]);
}

export const isSealed = (stored: string) => stored.startsWith(SEALED);

/** The key id a sealed value names (undefined for a plaintext value, written before sealing). */
export function sealedKeyId(stored: string): bigint | undefined {
  if (!isSealed(stored)) return undefined;
  return Buffer.from(stored.slice(SEALED.length, SEALED.length + 12), 'base64').readBigUInt64BE(0);
}

/** The plaintext of a sealed value; throws when the key is not the one it was sealed with or the value was altered. */
export function unseal(stored: string, key: StreamKey): string {
  return unsealBytes(Buffer.from(stored.slice(SEALED.length), 'base64'), key).toString('utf8');
}

/** The plaintext of bytes sealed by `sealBytes`; throws when the key is another or the bytes were altered. */
export function unsealBytes(raw: Buffer, key: StreamKey): Buffer {
  if (raw.readBigUInt64BE(0) !== key.id) throw new Error('sealed with another key');
  const iv = raw.subarray(KEY_ID_BYTES, KEY_ID_BYTES + IV_BYTES);
  const tag = raw.subarray(KEY_ID_BYTES + IV_BYTES, KEY_ID_BYTES + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key.key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(raw.subarray(KEY_ID_BYTES + IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/**
 * Keys by what they seal (a stream's, an owner's), the least recently used dropped beyond `max`: a hot stream's
 * appends and reads, a hot user's documents, need no lookup.
 */
export class KeyCache<K = string, V = StreamKey> {
  private readonly keys = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(of: K): V | undefined {
    const key = this.keys.get(of);
    if (key !== undefined) {
      this.keys.delete(of);
      this.keys.set(of, key);
    }
    return key;
  }

  set(of: K, key: V): void {
    this.keys.delete(of);
    this.keys.set(of, key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.keys().next().value as K);
  }

  delete(of: K): void {
    this.keys.delete(of);
  }
}

/**
 * Runs `work` for whoever asks, each asker answered by a run that began after they asked; the asks that arrive while
 * one runs share the next (many erasures, one scrub).
 */
export class Coalesced {
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly work: () => Promise<void>) {}

  request(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return (this.running = this.start());
    return (this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return (this.running = this.start());
      }));
  }

  private async start(): Promise<void> {
    try {
      await this.work();
    } finally {
      this.running = null;
    }
  }
}
