import type { UserExports } from '../domain/decider';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db, GridFSBucket } from 'mongodb';

/**
 * Where export zips live. An object becomes readable under its id only once it was written whole and made
 * durable; a write that fails or is killed half-way leaves nothing readable (at most a leftover that
 * `remove` deletes).
 */
export interface ExportStorage {
  readonly kind: 'files' | 'gridfs' | 'postgresql';
  newId(): string;
  write(id: string, source: Readable): Promise<void>;
  open(id: string): Promise<{ stream: Readable; size: number } | null>;
  /** Deletes the object and any partial leftover of it; nothing happens when there is none. */
  remove(id: string): Promise<void>;
  /** Ids of every complete object (for tests and the operator). */
  list(): Promise<string[]>;
}

const ID = /^[0-9a-f]{24}$/;
/** A storage id as every storage makes them (12 random bytes in hex); anything else is refused before it is used. */
export const checked = (id: string) => {
  if (!ID.test(id)) throw new Error(`not a storage id: ${id}`);
  return id;
};

/** Embedded mode: files under DATA_DIR/exports, written to `<id>.part`, fsynced, then renamed to `<id>.zip`. */
export class FileExportStorage implements ExportStorage {
  readonly kind = 'files';

  constructor(private readonly dir: string) {}

  newId(): string {
    return randomBytes(12).toString('hex');
  }

  private path(id: string, suffix: '.zip' | '.part') {
    return join(this.dir, `${checked(id)}${suffix}`);
  }

  async write(id: string, source: Readable): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const part = this.path(id, '.part');
    try {
      await pipeline(source, createWriteStream(part, { flags: 'wx', mode: 0o600 }));
      const handle = await open(part, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(part, this.path(id, '.zip'));
      // The rename itself must survive a crash: sync the directory entry too.
      const dir = await open(this.dir, 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (error) {
      await unlink(part).catch(() => undefined);
      throw error;
    }
  }

  async open(id: string): Promise<{ stream: Readable; size: number } | null> {
    const file = this.path(id, '.zip');
    try {
      const { size } = await stat(file);
      return { stream: createReadStream(file), size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(id: string): Promise<void> {
    for (const suffix of ['.zip', '.part'] as const) {
      await unlink(this.path(id, suffix)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
  }

  async list(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.zip')).map((n) => n.slice(0, -4));
  }
}

/**
 * Distributed mode: MongoDB GridFS (bucket `exports`), which FerretDB serves as plain collections. GridFS writes
 * the chunks first and the file document last; a download looks the file document up first, so a half-written
 * upload is never readable.
 */
export class GridFsExportStorage implements ExportStorage {
  readonly kind = 'gridfs';
  private readonly bucket: GridFSBucket;
  private readonly mongo = require('mongodb') as typeof import('mongodb');

  constructor(db: Db) {
    this.bucket = new this.mongo.GridFSBucket(db, { bucketName: 'exports' });
  }

  newId(): string {
    return new this.mongo.ObjectId().toHexString();
  }

  async write(id: string, source: Readable): Promise<void> {
    const upload = this.bucket.openUploadStreamWithId(new this.mongo.ObjectId(checked(id)), `${id}.zip`);
    try {
      await pipeline(source, upload);
    } catch (error) {
      await this.remove(id).catch(() => undefined);
      throw error;
    }
  }

  async open(id: string): Promise<{ stream: Readable; size: number } | null> {
    const [file] = await this.bucket.find({ _id: new this.mongo.ObjectId(checked(id)) }).toArray();
    if (!file) return null;
    return { stream: this.bucket.openDownloadStream(file._id), size: file.length };
  }

  async remove(id: string): Promise<void> {
    try {
      // Deletes the chunks even when there is no file document (an upload that was killed half-way).
      await this.bucket.delete(new this.mongo.ObjectId(checked(id)));
    } catch (error) {
      if (!/File not found/i.test((error as Error).message)) throw error;
    }
  }

  async list(): Promise<string[]> {
    return (await this.bucket.find({}).toArray()).map((f) => String(f._id));
  }
}

/** Removes the stored objects of the given exports: every attempt's, whole or partial (after a command deleted them). */
export async function removeExportFiles(storage: ExportStorage, state: UserExports, keys: string[]): Promise<void> {
  for (const key of keys) for (const id of state.exports.get(key)?.attempts ?? []) await storage.remove(id);
}
