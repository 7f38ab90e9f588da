import { QC_NS, QCC_NS, validateAgainstCatalogueSchema } from './index';

const items = (inner: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<qcc:Items xmlns:qcc="${QCC_NS}" xmlns:qc="${QC_NS}">${inner}</qcc:Items>`;

describe('validateAgainstCatalogueSchema (libxml2, schema importing qc.xsd)', () => {
  it('accepts an empty Items document', async () => {
    expect(await validateAgainstCatalogueSchema([{ fileName: 'empty.xml', xml: items('') }])).toEqual({ valid: true, errors: [] });
  });

  it('names the file, line and element of a schema error', async () => {
    const result = await validateAgainstCatalogueSchema([
      { fileName: 'ok.xml', xml: items('') },
      { fileName: 'bad.xml', xml: items('\n<qcc:ItemInfo><qcc:ThisVersion>v1</qcc:ThisVersion></qcc:ItemInfo>') },
    ]);
    expect(result.valid).toBe(false);
    expect(result.errors[0]).toEqual({
      fileName: 'bad.xml',
      line: 3,
      message: expect.stringContaining("Element '{tag:catalogue.qc.ebu.ch,2026-01}ThisVersion'"),
    });
  });

  it('reports a document that is not well-formed as one error of that file', async () => {
    const result = await validateAgainstCatalogueSchema([{ fileName: 'broken.xml', xml: items('<qcc:ItemInfo>\u0001</qcc:ItemInfo>') }]);
    expect(result.valid).toBe(false);
    expect(result.errors.every((e) => e.fileName === 'broken.xml')).toBe(true);
  });
});
