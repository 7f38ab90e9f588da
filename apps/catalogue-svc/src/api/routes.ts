import { Router, type Request, type Response } from 'express';
import { QC_ITEM_ID, QC_URL_VERSION, catalogueApi } from '@udp/contracts';
import { HttpError, mountRoute, notFoundError } from '@udp/http-kit';
import type { CatalogueView, ContentCoding, Rendition, Renditions } from '../projections/catalogue-view';
import { ICON_NAMES, layerIcon } from './icons';

/** The latest version may change: cache briefly, revalidate with the ETag. A version never changes. */
export const CACHE_LATEST = 'public, max-age=60';
export const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';

const MEDIA_TYPES = ['application/xml', 'text/xml', 'application/json'] as const;

function negotiate(req: Request): (typeof MEDIA_TYPES)[number] {
  const type = req.accepts([...MEDIA_TYPES]);
  if (!type)
    throw new HttpError(
      406,
      'Not Acceptable',
      `this resource is available as ${MEDIA_TYPES.join(', ')}; Accept was ${req.header('accept')}`,
    );
  return type as (typeof MEDIA_TYPES)[number];
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/ prefixes are ignored. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}

/** Sends a prepared rendition in the coding the client prefers; 304 when its copy is current. */
function send(req: Request, res: Response, renditions: Renditions, cacheControl: string): void {
  const type = negotiate(req);
  const rendition: Rendition = type === 'application/json' ? renditions.json : renditions.xml;
  const coding = (req.acceptsEncodings(['br', 'gzip', 'identity']) || 'identity') as ContentCoding;
  const { body, etag } = rendition.encoded(coding);
  res.vary('Accept').vary('Accept-Encoding');
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', cacheControl);
  if (matches(req.header('if-none-match'), etag)) {
    res.status(304).end();
    return;
  }
  if (coding !== 'identity') res.setHeader('Content-Encoding', coding);
  res.setHeader('Content-Type', `${type}; charset=utf-8`);
  res.status(200).end(body);
}

/** A malformed item id names no item: 404 (the table's schema documents the id; this checks its shape). */
function checkedItemId(id: string): string {
  if (!QC_ITEM_ID.test(id)) throw notFoundError(`no item "${id}": item ids are four digits followed by layer letters, e.g. 0001W`);
  return id;
}

export interface CatalogueRouteDeps {
  view: CatalogueView;
}

/** Read-only catalogue API: XML (EBU QC 2026-01 catalogue schema) or JSON on the same paths. */
export function catalogueRoutes({ view }: CatalogueRouteDeps): Router {
  const router = Router();

  mountRoute(router, catalogueApi.list, async (_input, req, res) => {
    send(req, res, (await view.snapshot()).list, CACHE_LATEST);
  });

  mountRoute(router, catalogueApi.item, async ({ params }, req, res) => {
    const id = checkedItemId(params.id);
    const found = (await view.snapshot()).latest.get(id);
    if (!found) throw notFoundError(`no published item ${id}`);
    send(req, res, found, CACHE_LATEST);
  });

  mountRoute(router, catalogueApi.itemVersion, async ({ params }, req, res) => {
    const id = checkedItemId(params.id);
    const written = params.version;
    if (!QC_URL_VERSION.test(written)) throw notFoundError(`no version "${written}" of item ${id}: write versions with dashes, e.g. 5-0`);
    const snapshot = await view.snapshot();
    const versions = snapshot.versionsOf.get(id);
    if (!versions) throw notFoundError(`no published item ${id}`);
    const version = written.replace(/-/g, '.');
    const found = snapshot.versions.get(`${id}@${version}`);
    if (!found) throw notFoundError(`item ${id} has no published version ${version} (published: ${versions.join(', ')})`);
    send(req, res, found, CACHE_IMMUTABLE);
  });

  // Not in the API document: the layer icons the item cards point to.
  router.get('/api/v2/icons/:file', (req, res) => {
    const layer = /^([a-z]+)\.svg$/.exec(String(req.params.file))?.[1];
    const svg = layer ? layerIcon(layer) : null;
    if (!svg) throw notFoundError(`no icon ${req.params.file} (icons: ${ICON_NAMES.map((n) => `${n}.svg`).join(', ')})`);
    res.setHeader('Cache-Control', CACHE_IMMUTABLE);
    res.type('image/svg+xml').send(svg);
  });

  return router;
}
