import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Collection } from '@udp/readmodel';
import { compareVersions } from '../domain/rules';
import type { ItemVersionDocument } from './catalogue';
import { type ItemVersionView, itemInfoXml, itemJson, itemsJson, itemsXml } from './renditions';

export type ContentCoding = 'br' | 'gzip' | 'identity';

/** The bytes of one coding of a rendition, with a strong ETag of exactly those bytes. */
export interface EncodedBody {
  body: Buffer;
  etag: string;
}

/** One serialized document; its compressed codings are made on first use and kept. */
export class Rendition {
  private readonly codings = new Map<ContentCoding, EncodedBody>();

  constructor(text: string) {
    const body = Buffer.from(text, 'utf8');
    this.codings.set('identity', { body, etag: etagOf(body) });
  }

  encoded(coding: ContentCoding): EncodedBody {
    let found = this.codings.get(coding);
    if (!found) {
      const identity = this.codings.get('identity')!.body;
      const body =
        coding === 'br'
          ? brotliCompressSync(identity, {
              params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
            })
          : gzipSync(identity, { level: 9 });
      found = { body, etag: etagOf(body) };
      this.codings.set(coding, found);
    }
    return found;
  }
}

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;

export interface Renditions {
  xml: Rendition;
  json: Rendition;
}

/** The whole catalogue serialized: built once per catalogue change, then served as bytes. */
export interface CatalogueSnapshot {
  list: Renditions;
  /** item id -> its latest published version. */
  latest: ReadonlyMap<string, Renditions>;
  /** `${id}@${version}` -> that version, as it was published (immutable). */
  versions: ReadonlyMap<string, Renditions>;
  /** item id -> its published versions, oldest first. */
  versionsOf: ReadonlyMap<string, string[]>;
}

const renditions = (view: ItemVersionView): Renditions => ({
  xml: new Rendition(itemInfoXml(view)),
  json: new Rendition(JSON.stringify(itemJson(view))),
});

export function buildSnapshot(docs: ItemVersionDocument[]): CatalogueSnapshot {
  const byItem = new Map<string, ItemVersionDocument[]>();
  for (const doc of docs) byItem.set(doc.itemId, [...(byItem.get(doc.itemId) ?? []), doc]);
  const latestViews: ItemVersionView[] = [];
  const latest = new Map<string, Renditions>();
  const versions = new Map<string, Renditions>();
  const versionsOf = new Map<string, string[]>();
  for (const itemId of [...byItem.keys()].sort()) {
    const sorted = byItem.get(itemId)!.sort((a, b) => compareVersions(a.version, b.version));
    const all = sorted.map((d) => d.version);
    versionsOf.set(itemId, all);
    for (const doc of sorted) versions.set(`${itemId}@${doc.version}`, renditions({ item: doc.item, versions: doc.versionsAtPublication }));
    const view = { item: sorted[sorted.length - 1].item, versions: all };
    latestViews.push(view);
    latest.set(itemId, renditions(view));
  }
  return {
    list: { xml: new Rendition(itemsXml(latestViews)), json: new Rendition(JSON.stringify(itemsJson(latestViews))) },
    latest,
    versions,
    versionsOf,
  };
}

/**
 * Serves the catalogue from a snapshot that is rebuilt only after the projection reported a change,
 * so a request costs a map lookup, not a serialization.
 */
export class CatalogueView {
  private generation = 0;
  private built: { generation: number; snapshot: CatalogueSnapshot } | null = null;
  private building: Promise<CatalogueSnapshot> | null = null;

  constructor(private readonly versions: Collection<ItemVersionDocument>) {}

  changed(): void {
    this.generation++;
  }

  async snapshot(): Promise<CatalogueSnapshot> {
    if (this.built?.generation === this.generation) return this.built.snapshot;
    if (!this.building) {
      const generation = this.generation;
      this.building = this.versions
        .find({})
        .then((docs) => {
          const snapshot = buildSnapshot(docs);
          this.built = { generation, snapshot };
          return snapshot;
        })
        .finally(() => {
          this.building = null;
        });
    }
    return this.building;
  }
}
