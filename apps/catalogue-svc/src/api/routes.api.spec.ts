import { QcItemJson, QcItemsJson, type QcItemDefinition } from '@udp/contracts';
import { validateAgainstCatalogueSchema } from '@udp/qc-schema';
import type { TestSystem } from '@udp/test-system';
import { startCatalogueSystem } from '../testing/catalogue';
import catalogueData from '../../data/items.json';

const DATA = catalogueData as QcItemDefinition[];
const IDS = [...new Set(DATA.map((i) => i.ID))].sort();
let system: TestSystem;

beforeAll(async () => {
  system = await startCatalogueSystem();
});
afterAll(() => system.stop());

const get = (path: string) =>
  system.http
    .get(path)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
const text = (res: { body: Buffer }) => res.body.toString('utf8');

async function expectValid(documents: Array<{ fileName: string; xml: string }>) {
  const result = await validateAgainstCatalogueSchema(documents);
  expect(result.errors).toEqual([]);
  expect(result.valid).toBe(true);
}

describe('GET /api/v2/items', () => {
  it('answers one Items document with the latest version of every item, valid against the schema, without credentials', async () => {
    const res = await get('/api/v2/items');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    const xml = text(res);
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<qcc:Items xmlns:qcc="tag:catalogue.qc.ebu.ch,2026-01"/);
    expect([...xml.matchAll(/<qcc:ItemInfo>/g)]).toHaveLength(45);
    expect(xml).toContain(
      '<qc:EBUQCID>0069W</qc:EBUQCID>\n      <qc:EBUQCName>Display Aspect Ratio</qc:EBUQCName>\n      <qc:EBUQCVersion>4.0</qc:EBUQCVersion>',
    );
    await expectValid([{ fileName: 'items.xml', xml }]);
  });

  it('emits no empty value element (Representation, Type, ValueRange, Unit, DefaultValue)', async () => {
    const xml = text(await get('/api/v2/items'));
    expect(xml).not.toMatch(/<qc:(Representation|Type|ValueRange|Unit|DefaultValue)(\s[^>]*)?(\/>|>\s*<\/qc:\1>)/);
  });

  it('answers the JSON rendition with the spec field names on Accept: application/json', async () => {
    const res = await system.http.get('/api/v2/items').set('accept', 'application/json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = QcItemsJson.parse(res.body);
    expect(body.Items.map((i) => i.ID)).toEqual(IDS);
    const afd = body.Items.find((i) => i.ID === '0001W')!;
    expect(Object.keys(afd)).toEqual(
      expect.arrayContaining([
        'ID',
        'Name',
        'Version',
        'Status',
        'UsableAs',
        'Description',
        'Definition',
        'Remarks',
        'Layer',
        'Category',
        'EssenceType',
        'Aliases',
        'Tags',
        'References',
        'TextExamples',
        'InputParameters',
        'OutputParameters',
      ]),
    );
    expect(afd).toMatchObject({ Version: '5.0', UsableAs: 'check report', Layer: 'wrapper', EssenceType: 'format' });
    expect(afd.OutputParameters[0]).toEqual({
      Name: 'CheckResult',
      Description: expect.any(String),
      Remarks: '',
      HasLocator: 'false',
      InReports: 'not applicable',
      InChecks: 'required',
      ValueRange: '{true,false}',
      Type: 'boolean',
    });
  });
});

describe('GET /api/v2/items/{id}', () => {
  it('answers every item as an ItemInfo document valid against the schema', async () => {
    const documents = [];
    for (const id of IDS) {
      const res = await get(`/api/v2/items/${id}`);
      expect(res.status).toBe(200);
      documents.push({ fileName: `${id}.xml`, xml: text(res) });
      expect(text(res)).toContain(`<qc:EBUQCID>${id}</qc:EBUQCID>`);
    }
    await expectValid(documents);
  });

  it('serves the latest published version and lists every version', async () => {
    const xml = text(await get('/api/v2/items/0069W'));
    expect(xml).toContain('<qcc:ThisVersion>4.0</qcc:ThisVersion>');
    expect(xml).toContain('<qcc:Versions>\n    <qcc:Version>3.0</qcc:Version>\n    <qcc:Version>4.0</qcc:Version>\n  </qcc:Versions>');
    const json = QcItemJson.parse((await system.http.get('/api/v2/items/0069W').set('accept', 'application/json')).body);
    expect(json).toMatchObject({ ID: '0069W', Version: '4.0', Versions: ['3.0', '4.0'] });
  });

  it('keeps the source and names the completed fields', async () => {
    const json = QcItemJson.parse((await system.http.get('/api/v2/items/0001F').set('accept', 'application/json')).body);
    expect(json.Source).toContain('https://qc.ebu.io/api/v2/items/0001F');
    expect(json.Completed).toEqual(['InputParameters', 'OutputParameters']);
    expect(text(await get('/api/v2/items/0001F'))).toContain('<prov:Completed>InputParameters OutputParameters</prov:Completed>');
  });

  it('answers 404 problems for unknown and malformed ids, never 500', async () => {
    for (const path of [
      '/api/v2/items/9999F',
      '/api/v2/items/not-an-id',
      '/api/v2/items/%00',
      '/api/v2/items/0001F%20x',
      `/api/v2/items/${'1'.repeat(300)}`,
    ]) {
      const res = await system.http.get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.status).toBe(404);
    }
  });

  it('answers 406 for a media type it cannot produce', async () => {
    const res = await system.http.get('/api/v2/items/0001F').set('accept', 'text/html');
    expect(res.status).toBe(406);
    expect(res.body.detail).toMatch(/application\/xml, text\/xml, application\/json/);
    expect((await system.http.get('/api/v2/items').set('accept', 'image/png')).status).toBe(406);
  });

  it('accepts text/xml and wildcards', async () => {
    expect((await get('/api/v2/items/0001F').set('accept', 'text/xml')).headers['content-type']).toBe('text/xml; charset=utf-8');
    expect((await get('/api/v2/items/0001F').set('accept', '*/*')).headers['content-type']).toBe('application/xml; charset=utf-8');
  });
});

describe('GET /api/v2/items/{id}/versions/{version}', () => {
  it('serves each version, older ones included, immutable and long-lived in caches', async () => {
    const older = await get('/api/v2/items/0069W/versions/3-0');
    expect(older.status).toBe(200);
    expect(older.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(text(older)).toContain('<qcc:ThisVersion>3.0</qcc:ThisVersion>');
    expect(text(older)).toContain('<qc:EBUQCVersion>3.0</qc:EBUQCVersion>');
    // The ItemInfo of a version lists the versions published up to it, so its bytes never change.
    expect(text(older)).not.toContain('<qcc:Version>4.0</qcc:Version>');
    const latest = await get('/api/v2/items/0069W/versions/4-0');
    expect(text(latest)).toContain('<qcc:ThisVersion>4.0</qcc:ThisVersion>');
    await expectValid([
      { fileName: 'v3.xml', xml: text(older) },
      { fileName: 'v4.xml', xml: text(latest) },
    ]);
    const again = await get('/api/v2/items/0069W/versions/3-0');
    expect(again.headers.etag).toBe(older.headers.etag);
    expect(again.body.equals(older.body)).toBe(true);
  });

  it('answers JSON too', async () => {
    const res = await system.http.get('/api/v2/items/0069W/versions/3-0').set('accept', 'application/json');
    expect(QcItemJson.parse(res.body)).toMatchObject({ ID: '0069W', Version: '3.0', Versions: ['3.0'] });
  });

  it('answers 404 for unknown or malformed versions and unknown items', async () => {
    for (const path of [
      '/api/v2/items/0069W/versions/9-0',
      '/api/v2/items/0069W/versions/3.0',
      '/api/v2/items/0069W/versions/latest',
      '/api/v2/items/0069W/versions/03-0',
      '/api/v2/items/9999W/versions/1-0',
      '/api/v2/items/bad!/versions/1-0',
    ]) {
      const res = await system.http.get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    expect((await system.http.get('/api/v2/items/0069W/versions/9-0')).body.detail).toMatch(/published: 3\.0, 4\.0/);
  });
});

describe('caching and compression through the gateway', () => {
  it('answers strong ETags and 304 on If-None-Match', async () => {
    const first = await get('/api/v2/items');
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers['cache-control']).toBe('public, max-age=60');
    const again = await get('/api/v2/items').set('if-none-match', etag);
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(etag);
    expect(again.body.length).toBe(0);
    expect((await get('/api/v2/items').set('if-none-match', `W/${etag}`)).status).toBe(304);
    expect((await get('/api/v2/items').set('if-none-match', '"other"')).status).toBe(200);
  });

  it('gives XML and JSON different ETags, and the same bytes the same ETag', async () => {
    const xml = await get('/api/v2/items/0001F');
    const json = await system.http.get('/api/v2/items/0001F').set('accept', 'application/json');
    expect(xml.headers.etag).not.toBe(json.headers.etag);
    expect(xml.headers.vary).toMatch(/Accept/);
    expect((await get('/api/v2/items/0001F')).headers.etag).toBe(xml.headers.etag);
  });

  it('compresses with br or gzip, each coding with its own strong ETag', async () => {
    const plain = await get('/api/v2/items').set('accept-encoding', 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzip = await get('/api/v2/items').set('accept-encoding', 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    const br = await get('/api/v2/items').set('accept-encoding', 'br, gzip');
    expect(br.headers['content-encoding']).toBe('br');
    // supertest decompresses gzip and br bodies; the ETags tell the codings apart.
    expect(new Set([plain.headers.etag, gzip.headers.etag, br.headers.etag]).size).toBe(3);
    expect(gzip.body.equals(plain.body)).toBe(true);
    expect(br.body.equals(plain.body)).toBe(true);
    expect((await get('/api/v2/items').set('accept-encoding', 'gzip').set('if-none-match', gzip.headers.etag)).status).toBe(304);
  });
});

describe('GET /api/v2/icons/{layer}.svg', () => {
  it('serves the icon every card points to', async () => {
    const xml = text(await get('/api/v2/items'));
    const locations = new Set([...xml.matchAll(/<qcc:Location>([^<]+)<\/qcc:Location>/g)].map((m) => m[1]));
    expect(locations.size).toBe(4);
    for (const location of locations) {
      const res = await get(location);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    }
    expect((await system.http.get('/api/v2/icons/nope.svg')).status).toBe(404);
  });
});

describe('GET /openapi.json', () => {
  it('documents the three catalogue paths, without credentials', async () => {
    const doc = (await system.http.get('/openapi.json')).body;
    for (const path of ['/api/v2/items', '/api/v2/items/{id}', '/api/v2/items/{id}/versions/{version}']) {
      expect(doc.paths[path].get.security).toEqual([]);
    }
  });
});
