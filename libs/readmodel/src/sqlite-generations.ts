import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * The read-model file's generations. An erasure's compaction copies the live rows into a new file (`<file>.g<n>`),
 * switches to it and destroys the old one; `<file>.current` names the file in use until the next start, which
 * renames it back to `<file>` (nothing has it open then). Whatever a crash left behind is settled at that start:
 * the file named current is kept, every other generation is overwritten with zeros and removed.
 */

const SUFFIXES = ['', '-wal', '-shm'];
const pointerOf = (file: string) => `${file}.current`;

/** The file that follows `current` (the base file or one of its generations). */
export function nextGeneration(base: string, current: string): string {
  const n = current === base ? 0 : Number(current.slice(base.length + 2));
  return `${base}.g${n + 1}`;
}

/** Names `current` as the file in use: written whole, then renamed over the old name, so a crash sees one or the other. */
export function recordCurrent(base: string, current: string): void {
  const temporary = `${pointerOf(base)}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, basename(current));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, pointerOf(base));
  syncDirectory(dirname(base));
}

/** At start, before anything opens `base`: the file in use is `base` again, and no other generation is left. */
export function settleGenerations(base: string): void {
  const dir = dirname(base);
  const pointer = pointerOf(base);
  if (existsSync(pointer)) {
    const named = readFileSync(pointer, 'utf8').trim();
    // Only a generation of this very file is taken (never a path elsewhere that the pointer might name).
    const current = new RegExp(`^${escapeRegExp(basename(base))}\\.g\\d+$`).test(named) ? join(dir, named) : base;
    if (current !== base && existsSync(current)) {
      // The file it replaced may hold an erased user's rows (a crash before they were destroyed).
      for (const suffix of SUFFIXES) destroySync(`${base}${suffix}`);
      for (const suffix of SUFFIXES) if (existsSync(`${current}${suffix}`)) renameSync(`${current}${suffix}`, `${base}${suffix}`);
      syncDirectory(dir);
    }
    rmSync(pointer, { force: true });
  }
  rmSync(`${pointer}.tmp`, { force: true });
  const prefix = `${basename(base)}.g`;
  for (const name of readdirSync(dir)) if (name.startsWith(prefix)) destroySync(join(dir, name));
}

/** Overwrites a file with zeros, then removes it: its bytes leave the disk, not just the directory. */
export async function destroy(file: string): Promise<void> {
  let handle;
  try {
    handle = await open(file, 'r+');
  } catch {
    return; // gone already
  }
  try {
    const { size } = await handle.stat();
    const zeros = Buffer.alloc(Math.min(size, 1 << 20));
    for (let at = 0; at < size; at += zeros.length) await handle.write(zeros, 0, Math.min(zeros.length, size - at), at);
    await handle.sync();
  } finally {
    await handle.close();
  }
  // Not rmSync: unlinking a file of hundreds of MiB held the event loop 110-160 ms (the file system frees its blocks).
  await rm(file, { force: true });
}

export async function destroyFiles(file: string): Promise<void> {
  for (const suffix of SUFFIXES) await destroy(`${file}${suffix}`);
}

function destroySync(file: string): void {
  if (!existsSync(file)) return;
  const size = statSync(file).size;
  const fd = openSync(file, 'r+');
  try {
    const zeros = Buffer.alloc(Math.min(size, 1 << 20));
    for (let at = 0; at < size; at += zeros.length) writeSync(fd, zeros, 0, Math.min(zeros.length, size - at), at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  rmSync(file, { force: true });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
