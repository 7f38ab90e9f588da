import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CheckpointStore } from '@udp/readmodel';

/**
 * Checkpoints in a small JSON file (embedded mode), for the message publishers: the statuses are rebuilt in
 * memory at every start, but the messages and callbacks they drive must not be sent again at every start.
 */
export function fileCheckpoints(file: string): CheckpointStore {
  const read = (): Record<string, string> => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
  };
  return {
    load: async (name) => {
      const value = read()[name];
      return value === undefined ? null : BigInt(value);
    },
    save: async (name, position) => {
      mkdirSync(dirname(file), { recursive: true });
      const all = { ...read(), [name]: position.toString() };
      writeFileSync(`${file}.tmp`, JSON.stringify(all));
      renameSync(`${file}.tmp`, file);
    },
  };
}
