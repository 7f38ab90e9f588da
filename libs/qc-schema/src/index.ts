import { validateXML } from 'xmllint-wasm';
import catalogueApiXsd from '../schemas/2026-01/qc-catalogue-api/qc-catalogue-api-schema.xsd';
import dataModelXsd from '../schemas/2026-01/qc-data-model/qc.xsd';

/** Namespaces of the EBU QC 2026-01 publication (a schema change always means a new namespace). */
export const QC_NS = 'tag:qc.ebu.ch,2026-01';
export const QCC_NS = 'tag:catalogue.qc.ebu.ch,2026-01';
export const SCHEMA_EDITION = '2026-01';

/** The schema texts, for anyone who wants to hand them to another validator. */
export const CATALOGUE_SCHEMAS = {
  'qc-catalogue-api/qc-catalogue-api-schema.xsd': catalogueApiXsd,
  'qc-data-model/qc.xsd': dataModelXsd,
} as const;

export interface XmlDocument {
  /** A name for error messages; letters, digits, dots, dashes and underscores (not starting with a dash). */
  fileName: string;
  xml: string;
}

export interface SchemaError {
  fileName: string | null;
  line: number | null;
  message: string;
}

export interface SchemaValidation {
  valid: boolean;
  errors: SchemaError[];
}

/**
 * Validates documents against the 2026-01 catalogue API schema (which imports the base qc.xsd) with
 * libxml2 compiled to WebAssembly. Several documents go through one run: one worker, one schema parse.
 */
export async function validateAgainstCatalogueSchema(documents: XmlDocument[]): Promise<SchemaValidation> {
  if (documents.length === 0) return { valid: true, errors: [] };
  const result = await validateXML({
    xml: documents.map((d) => ({ fileName: d.fileName, contents: d.xml })),
    schema: [{ fileName: 'qc-catalogue-api-schema.xsd', contents: catalogueApiXsd }],
    // The import's schemaLocation is ../qc-data-model/qc.xsd; the in-memory file system resolves it from /.
    preload: [{ fileName: '../qc-data-model/qc.xsd', contents: dataModelXsd }],
    maxMemoryPages: 4096,
  });
  const errors: SchemaError[] = [];
  const known = new Set(documents.map((d) => d.fileName));
  for (const e of result.errors) {
    const fileName = e.loc?.fileName && known.has(e.loc.fileName) ? e.loc.fileName : null;
    const line = e.loc && Number.isInteger(Number(e.loc.lineNumber)) ? Number(e.loc.lineNumber) : null;
    const message = (fileName ? e.message : e.rawMessage).replace(/^.*?(Schemas (validity|parser) error|parser error) : /, '').trim();
    const previous = errors[errors.length - 1];
    // libxml2 follows a parser error with context lines (the text, a caret): they belong to that error.
    if (!fileName && previous) previous.message = `${previous.message} | ${message}`;
    else errors.push({ fileName, line: fileName ? line : null, message });
  }
  return { valid: result.valid, errors };
}
