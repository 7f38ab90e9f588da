import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { MemoryReadModelStore, type ReadModelImage } from './memory';
import type { Document } from './port';

/** What the file says it is; a file of another format or version is ignored (the read models are rebuilt). */
export const READ_MODELS_FORMAT = 'udp-memory-read-models';
export const READ_MODELS_VERSION = 1;
const DOCUMENTS_PER_LINE = 1000;
const WRITE_CHUNK_BYTES = 1 << 20;

export interface PersistedReadModelsLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface PersistedReadModelsOptions {
  /** Where the copy is kept: DATA_DIR/<service>/read-models.ndjson in the embedded mode. */
  file: string;
  /**
   * The highest position the event log ever gave. A copy with a checkpoint beyond it did not come from this
   * log (the events file was replaced or restored): it is ignored.
   */
  head(): bigint;
  /** A save is due once the checkpoints advanced by this many positions (default 100,000)... */
  saveEvery?: number;
  /** ...checked this often (default every 5 minutes, so a start that replays the whole log does not save half-way). A clean stop always saves. */
  checkIntervalMs?: number;
  logger?: PersistedReadModelsLogger;
}

/**
 * The memory read models, saved with their checkpoints into one file so that a start replays only the events
 * after them: at a clean stop, and every `saveEvery` events (checked every `checkIntervalMs`).
 *
 * - A save is consistent: the documents and checkpoints are taken at one instant (`image()`, no copying, since
 *   stored documents are never changed), then written to a temporary file, fsynced and renamed over the old one.
 *   A crash leaves the previous copy (or none): the start replays more events, never fewer.
 * - The copy is trusted only as far as the log goes: an unreadable, truncated or unknown-version file, or one
 *   whose checkpoint is beyond the log's head, is ignored with a warning (and destroyed) and the read models are
 *   rebuilt.
 * - Deleted documents (an erasure) never come back from a copy: a deletion overwrites and removes the file (and
 *   stops a save under way), so the next start rebuilds from the log, which no longer holds them, until the
 *   next save writes a copy without them.
 */
export class PersistedMemoryReadModelStore extends MemoryReadModelStore {
  /** Bumped by every deletion: a save that began before it must not land. */
  private epoch = 0;
  /** Saves run one after the other (they share the temporary file). */
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;
  /** The highest checkpoint in the file on disk, and the highest saved by a projector since. */
  private savedAt = 0n;
  private highest = 0n;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(private readonly options: PersistedReadModelsOptions) {
    super();
    this.timer = setInterval(
      () => {
        if (this.pending === 0 && this.highest - this.savedAt >= BigInt(options.saveEvery ?? 100_000)) void this.save();
      },
      options.checkIntervalMs ?? 5 * 60_000,
    );
    this.timer.unref();
  }

  /** Opens the store with the saved copy when it can be trusted, else empty (the projectors rebuild it). */
  static async open(options: PersistedReadModelsOptions): Promise<PersistedMemoryReadModelStore> {
    const store = new PersistedMemoryReadModelStore(options);
    // A temporary file is what a crash during a save left: never complete, so never used.
    destroy(temporaryOf(options.file));
    const started = performance.now();
    const read = await readImage(options.file).catch((error: unknown) => ({ problem: `unreadable: ${(error as Error).message}` }));
    if (read === null) return store;
    const problem = 'problem' in read ? read.problem : beyondHead(read.image, options.head());
    if (problem !== null) {
      // Of no use, and possibly what an erasure interrupted half-way through destroying: destroyed now.
      destroy(options.file);
      options.logger?.warn({ file: options.file, problem }, 'saved read models ignored and removed; rebuilding them from the event log');
      return store;
    }
    const image = (read as { image: ReadModelImage }).image;
    store.restore(image);
    store.savedAt = store.highest = highestOf(image.checkpoints);
    const documents = [...image.collections.values()].reduce((n, docs) => n + docs.length, 0);
    options.logger?.info(
      { file: options.file, documents, checkpoint: store.savedAt.toString(), ms: Math.round(performance.now() - started) },
      'read models loaded; replaying the events after their checkpoint',
    );
    return store;
  }

  protected override checkpointSaved(position: bigint): void {
    if (position > this.highest) this.highest = position;
  }

  protected override documentsDeleted(): void {
    this.epoch++;
    destroy(this.options.file);
    destroy(temporaryOf(this.options.file));
    // The copy is gone; the next check saves one without the deleted documents.
    this.savedAt = 0n;
  }

  /** Saves a copy now (after the one under way, if any). False when a deletion made it stale before it landed. */
  save(): Promise<boolean> {
    this.pending++;
    const run = this.queue
      .then(() => this.write())
      .catch((error: unknown) => {
        this.options.logger?.warn(
          { file: this.options.file, err: error },
          'saving the read models failed; the next start replays more events',
        );
        return false;
      })
      .finally(() => this.pending--);
    this.queue = run;
    return run;
  }

  private async write(): Promise<boolean> {
    const { file } = this.options;
    const epoch = this.epoch;
    const image = this.image();
    const temporary = temporaryOf(file);
    mkdirSync(dirname(file), { recursive: true });
    const handle = await open(temporary, 'w');
    let complete = false;
    try {
      let buffer = '';
      const flush = async (force = false) => {
        if (buffer.length < WRITE_CHUNK_BYTES && !force) return;
        // Stop writing documents a deletion made stale; what was written is destroyed below.
        if (epoch !== this.epoch) throw new Stale();
        await handle.write(buffer);
        buffer = '';
      };
      const checkpoints = Object.fromEntries([...image.checkpoints].map(([name, position]) => [name, position.toString()]));
      buffer += `${JSON.stringify({ format: READ_MODELS_FORMAT, version: READ_MODELS_VERSION, checkpoints })}\n`;
      let total = 0;
      for (const [collection, docs] of image.collections) {
        buffer += `${JSON.stringify({ collection, documents: docs.length })}\n`;
        for (let i = 0; i < docs.length; i += DOCUMENTS_PER_LINE) {
          buffer += `${JSON.stringify(docs.slice(i, i + DOCUMENTS_PER_LINE))}\n`;
          await flush();
        }
        total += docs.length;
      }
      buffer += `${JSON.stringify({ end: true, documents: total })}\n`;
      await flush(true);
      await handle.sync();
      complete = true;
    } catch (error) {
      if (!(error instanceof Stale)) throw error;
    } finally {
      await handle.close();
    }
    // The check and the rename run without a pause between them: no deletion can come in between.
    if (!complete || epoch !== this.epoch) {
      destroy(temporary);
      return false;
    }
    renameSync(temporary, file);
    syncDirectory(dirname(file));
    this.savedAt = highestOf(image.checkpoints);
    return true;
  }

  /** A clean stop: the projectors have stopped, so this copy is current and the next start replays nothing. */
  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.save();
  }
}

class Stale extends Error {}

const temporaryOf = (file: string) => `${file}.tmp`;

function highestOf(checkpoints: Map<string, bigint>): bigint {
  let highest = 0n;
  for (const position of checkpoints.values()) if (position > highest) highest = position;
  return highest;
}

function beyondHead(image: ReadModelImage, head: bigint): string | null {
  for (const [name, position] of image.checkpoints) {
    if (position > head) return `checkpoint ${name} at ${position} is beyond the event log's head ${head}`;
  }
  return null;
}

/** Overwrites a file with zeros, then removes it: the erased documents are in no file, not even in its old blocks. */
function destroy(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const zeros = Buffer.alloc(WRITE_CHUNK_BYTES);
    const size = fstatSync(fd).size;
    for (let at = 0; at < size; at += zeros.length) writeSync(fd, zeros, 0, Math.min(zeros.length, size - at), at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  unlinkSync(file);
  syncDirectory(dirname(file));
}

function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The file's lines, read in large chunks (a line holds up to DOCUMENTS_PER_LINE documents). */
async function* linesOf(file: string): AsyncGenerator<string> {
  const handle = await open(file, 'r');
  try {
    const decoder = new StringDecoder('utf8');
    const chunk = Buffer.alloc(4 * WRITE_CHUNK_BYTES);
    let rest = '';
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      const text = rest + decoder.write(chunk.subarray(0, bytesRead));
      let start = 0;
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
        yield text.slice(start, end);
        start = end + 1;
      }
      rest = text.slice(start);
    }
    rest += decoder.end();
    if (rest) yield rest;
  } finally {
    await handle.close();
  }
}

/** The file's image; null when there is no file; a problem when it is not a complete copy of a known version. */
async function readImage(file: string): Promise<{ image: ReadModelImage } | { problem: string } | null> {
  if (!existsSync(file)) return null;
  const image: ReadModelImage = { checkpoints: new Map(), collections: new Map() };
  let header = false;
  let current: { docs: Document[]; expected: number } | null = null;
  let total = 0;
  for await (const line of linesOf(file)) {
    const value = JSON.parse(line) as unknown;
    if (!header) {
      const h = value as { format?: unknown; version?: unknown; checkpoints?: Record<string, unknown> };
      if (h.format !== READ_MODELS_FORMAT || h.version !== READ_MODELS_VERSION) {
        return { problem: `format ${String(h.format)} version ${String(h.version)}, not ${READ_MODELS_FORMAT} ${READ_MODELS_VERSION}` };
      }
      for (const [name, position] of Object.entries(h.checkpoints ?? {})) {
        if (typeof position !== 'string' || !/^\d+$/.test(position)) return { problem: `checkpoint ${name} is not a position` };
        image.checkpoints.set(name, BigInt(position));
      }
      header = true;
    } else if (Array.isArray(value)) {
      if (!current) return { problem: 'documents before their collection' };
      for (const doc of value as Document[]) current.docs.push(doc);
      if (current.docs.length > current.expected) return { problem: 'more documents than announced' };
    } else {
      if (current && current.docs.length !== current.expected) return { problem: 'a collection is incomplete' };
      const marker = value as { collection?: unknown; documents?: unknown; end?: unknown };
      if (marker.end === true) {
        if (marker.documents !== total) return { problem: 'the document count does not match' };
        return { image };
      }
      if (typeof marker.collection !== 'string' || typeof marker.documents !== 'number') return { problem: 'unexpected line' };
      current = { docs: [], expected: marker.documents };
      image.collections.set(marker.collection, current.docs);
      total += marker.documents;
    }
  }
  return { problem: header ? 'truncated (no end line)' : 'empty' };
}
