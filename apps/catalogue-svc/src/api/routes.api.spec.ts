import { QcItemJson, QcItemsJson, type QcItemDefinition } from '@udp/contracts';
import { validateAgainstCatalogueSchema } from '@udp/qc-schema';
import { given } from '@udp/test-kit';
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

/** The catalogue of data/items.json, loaded when the system starts: the state every test here reads (none changes it). */
const published = () => undefined;
const getJson = (path: string) => system.http.get(path).set('accept', 'application/json');

describe('GET /api/v2/items', () => {
  it('answers one Items document with the latest version of every item, valid against the schema, without credentials', async () => {
    await given(published)
      .when(() => get('/api/v2/items'))
      .then(async (res) => {
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
  });

  it('emits no empty value element (Representation, Type, ValueRange, Unit, DefaultValue)', async () => {
    await given(published)
      .when(() => get('/api/v2/items'))
      .then((res) => expect(text(res)).not.toMatch(/<qc:(Representation|Type|ValueRange|Unit|DefaultValue)(\s[^>]*)?(\/>|>\s*<\/qc:\1>)/));
  });

  it('answers the JSON rendition with the spec field names on Accept: application/json', async () => {
    await given(published)
      .when(() => getJson('/api/v2/items'))
      .then((res) => {
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
});

describe('GET /api/v2/items/{id}', () => {
  it('answers every item as an ItemInfo document valid against the schema', async () => {
    await given(published)
      .when(async () => {
        const answers = [];
        for (const id of IDS) answers.push({ id, res: await get(`/api/v2/items/${id}`) });
        return answers;
      })
      .then(async (answers) => {
        const documents = [];
        for (const { id, res } of answers) {
          expect(res.status).toBe(200);
          documents.push({ fileName: `${id}.xml`, xml: text(res) });
          expect(text(res)).toContain(`<qc:EBUQCID>${id}</qc:EBUQCID>`);
        }
        await expectValid(documents);
      });
  });

  it('serves the latest published version and lists every version', async () => {
    await given(published)
      .when(() => get('/api/v2/items/0069W'))
      .then((res) => {
        const xml = text(res);
        expect(xml).toContain('<qcc:ThisVersion>4.0</qcc:ThisVersion>');
        expect(xml).toContain('<qcc:Versions>\n    <qcc:Version>3.0</qcc:Version>\n    <qcc:Version>4.0</qcc:Version>\n  </qcc:Versions>');
      });
    await given(published)
      .when(() => getJson('/api/v2/items/0069W'))
      .then((res) => expect(QcItemJson.parse(res.body)).toMatchObject({ ID: '0069W', Version: '4.0', Versions: ['3.0', '4.0'] }));
  });

  it('keeps the source and names the completed fields', async () => {
    await given(published)
      .when(() => getJson('/api/v2/items/0001F'))
      .then((res) => {
        const json = QcItemJson.parse(res.body);
        expect(json.Source).toContain('https://qc.ebu.io/api/v2/items/0001F');
        expect(json.Completed).toEqual(['InputParameters', 'OutputParameters']);
      });
    await given(published)
      .when(() => get('/api/v2/items/0001F'))
      .then((res) => expect(text(res)).toContain('<prov:Completed>InputParameters OutputParameters</prov:Completed>'));
  });

  it('answers 404 problems for unknown and malformed ids, never 500', async () => {
    for (const path of [
      '/api/v2/items/9999F',
      '/api/v2/items/not-an-id',
      '/api/v2/items/%00',
      '/api/v2/items/0001F%20x',
      `/api/v2/items/${'1'.repeat(300)}`,
    ]) {
      await given(published)
        .when(() => system.http.get(path))
        .then((res) => {
          expect(res.status).toBe(404);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
          expect(res.body.status).toBe(404);
        });
    }
  });

  it('answers 406 for a media type it cannot produce', async () => {
    await given(published)
      .when(() => system.http.get('/api/v2/items/0001F').set('accept', 'text/html'))
      .then((res) => {
        expect(res.status).toBe(406);
        expect(res.body.detail).toMatch(/application\/xml, text\/xml, application\/json/);
      });
    await given(published)
      .when(() => system.http.get('/api/v2/items').set('accept', 'image/png'))
      .then((res) => expect(res.status).toBe(406));
  });

  it('accepts text/xml and wildcards', async () => {
    for (const [accept, contentType] of [
      ['text/xml', 'text/xml; charset=utf-8'],
      ['*/*', 'application/xml; charset=utf-8'],
    ]) {
      await given(published)
        .when(() => get('/api/v2/items/0001F').set('accept', accept))
        .then((res) => expect(res.headers['content-type']).toBe(contentType));
    }
  });
});

describe('GET /api/v2/items/{id}/versions/{version}', () => {
  it('serves each version, older ones included, immutable and long-lived in caches', async () => {
    const olderVersion = () => get('/api/v2/items/0069W/versions/3-0');
    await given(published)
      .when(olderVersion)
      .then((older) => {
        expect(older.status).toBe(200);
        expect(older.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(text(older)).toContain('<qcc:ThisVersion>3.0</qcc:ThisVersion>');
        expect(text(older)).toContain('<qc:EBUQCVersion>3.0</qc:EBUQCVersion>');
        // The ItemInfo of a version lists the versions published up to it, so its bytes never change.
        expect(text(older)).not.toContain('<qcc:Version>4.0</qcc:Version>');
      });
    await given(olderVersion)
      .when(() => get('/api/v2/items/0069W/versions/4-0'))
      .then(async (latest, older) => {
        expect(text(latest)).toContain('<qcc:ThisVersion>4.0</qcc:ThisVersion>');
        await expectValid([
          { fileName: 'v3.xml', xml: text(older) },
          { fileName: 'v4.xml', xml: text(latest) },
        ]);
      });
    await given(olderVersion)
      .when(olderVersion)
      .then((again, older) => {
        expect(again.headers.etag).toBe(older.headers.etag);
        expect(again.body.equals(older.body)).toBe(true);
      });
  });

  it('answers JSON too', async () => {
    await given(published)
      .when(() => getJson('/api/v2/items/0069W/versions/3-0'))
      .then((res) => expect(QcItemJson.parse(res.body)).toMatchObject({ ID: '0069W', Version: '3.0', Versions: ['3.0'] }));
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
      await given(published)
        .when(() => system.http.get(path))
        .then((res) => {
          expect(res.status).toBe(404);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        });
    }
    await given(published)
      .when(() => system.http.get('/api/v2/items/0069W/versions/9-0'))
      .then((res) => expect(res.body.detail).toMatch(/published: 3\.0, 4\.0/));
  });
});

describe('caching and compression through the gateway', () => {
  it('answers strong ETags and 304 on If-None-Match', async () => {
    const etagOfItems = async () => (await get('/api/v2/items')).headers.etag as string;
    await given(published)
      .when(() => get('/api/v2/items'))
      .then((first) => {
        expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
        expect(first.headers['cache-control']).toBe('public, max-age=60');
      });
    await given(etagOfItems)
      .when((etag) => get('/api/v2/items').set('if-none-match', etag))
      .then((again, etag) => {
        expect(again.status).toBe(304);
        expect(again.headers.etag).toBe(etag);
        expect(again.body.length).toBe(0);
      });
    await given(etagOfItems)
      .when((etag) => get('/api/v2/items').set('if-none-match', `W/${etag}`))
      .then((res) => expect(res.status).toBe(304));
    await given(etagOfItems)
      .when(() => get('/api/v2/items').set('if-none-match', '"other"'))
      .then((res) => expect(res.status).toBe(200));
  });

  it('gives XML and JSON different ETags, and the same bytes the same ETag', async () => {
    const xmlOf0001F = () => get('/api/v2/items/0001F');
    await given(xmlOf0001F)
      .when(() => getJson('/api/v2/items/0001F'))
      .then((json, xml) => {
        expect(xml.headers.etag).not.toBe(json.headers.etag);
        expect(xml.headers.vary).toMatch(/Accept/);
      });
    await given(xmlOf0001F)
      .when(xmlOf0001F)
      .then((again, xml) => expect(again.headers.etag).toBe(xml.headers.etag));
  });

  it('compresses with br or gzip, each coding with its own strong ETag', async () => {
    const inCoding = (acceptEncoding: string) => get('/api/v2/items').set('accept-encoding', acceptEncoding);
    await given(published)
      .when(async () => [await inCoding('identity'), await inCoding('gzip'), await inCoding('br, gzip')])
      .then(([plain, gzip, br]) => {
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(gzip.headers['content-encoding']).toBe('gzip');
        expect(br.headers['content-encoding']).toBe('br');
        // supertest decompresses gzip and br bodies; the ETags tell the codings apart.
        expect(new Set([plain.headers.etag, gzip.headers.etag, br.headers.etag]).size).toBe(3);
        expect(gzip.body.equals(plain.body)).toBe(true);
        expect(br.body.equals(plain.body)).toBe(true);
      });
    await given(async () => (await inCoding('gzip')).headers.etag as string)
      .when((gzipEtag) => inCoding('gzip').set('if-none-match', gzipEtag))
      .then((res) => expect(res.status).toBe(304));
  });
});

describe('GET /api/v2/icons/{layer}.svg', () => {
  it('serves the icon every card points to', async () => {
    await given(async () => {
      const xml = text(await get('/api/v2/items'));
      const locations = new Set([...xml.matchAll(/<qcc:Location>([^<]+)<\/qcc:Location>/g)].map((m) => m[1]));
      expect(locations.size).toBe(4);
      return locations;
    })
      .when(async (locations) => {
        const answers = [];
        for (const location of locations) answers.push(await get(location));
        return answers;
      })
      .then((answers) => {
        for (const res of answers) {
          expect(res.status).toBe(200);
          expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
        }
      });
    await given(published)
      .when(() => system.http.get('/api/v2/icons/nope.svg'))
      .then((res) => expect(res.status).toBe(404));
  });
});

describe('GET /openapi.json', () => {
  it('documents the three catalogue paths, without credentials', async () => {
    await given(published)
      .when(() => system.http.get('/openapi.json'))
      .then((res) => {
        for (const path of ['/api/v2/items', '/api/v2/items/{id}', '/api/v2/items/{id}/versions/{version}']) {
          expect(res.body.paths[path].get.security).toEqual([]);
        }
      });
  });
});
