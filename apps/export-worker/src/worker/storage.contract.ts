import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ExportStorage } from './storage';

const read = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** What every export storage must do: whole objects only, none readable before complete, removal of leftovers. */
export function storageContract(name: string, open: () => Promise<ExportStorage>, close: () => Promise<void> = async () => undefined) {
  describe(`export storage contract: ${name}`, () => {
    let storage: ExportStorage;
    beforeAll(async () => {
      storage = await open();
    });
    afterAll(close);

    it('stores a large object streamed in chunks and gives it back whole', async () => {
      const id = storage.newId();
      const data = randomBytes(3 * 1024 * 1024 + 17);
      await storage.write(
        id,
        Readable.from(
          (function* () {
            for (let i = 0; i < data.length; i += 64 * 1024) yield data.subarray(i, i + 64 * 1024);
          })(),
        ),
      );
      const object = (await storage.open(id))!;
      expect(object.size).toBe(data.length);
      expect(
        createHash('sha256')
          .update(await read(object.stream))
          .digest('hex'),
      ).toBe(createHash('sha256').update(data).digest('hex'));
      expect(await storage.list()).toContain(id);
      await storage.remove(id);
      expect(await storage.open(id)).toBeNull();
      await storage.remove(id); // again: nothing there, no error
    });

    it('never makes a half-written object readable, and removes its leftover', async () => {
      const id = storage.newId();
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const source = new Readable({ read() {} });
      source.push(randomBytes(512 * 1024));
      const writing = storage.write(id, source);
      await new Promise((r) => setTimeout(r, 100));
      expect(await storage.open(id)).toBeNull();
      expect(await storage.list()).not.toContain(id);
      source.destroy(new Error('source failed'));
      release();
      await held;
      await expect(writing).rejects.toThrow('source failed');
      expect(await storage.open(id)).toBeNull();
      await storage.remove(id);
    });

    it('refuses ids that are not its own', async () => {
      await expect(storage.open('../../etc/passwd')).rejects.toThrow(/not a storage id/);
    });
  });
}
