import { XMLBuilder } from 'fast-xml-parser';
import type { QcItemDefinition, QcItemJson, QcItemsJson, QcParameter } from '@udp/contracts';
import { QC_NS, QCC_NS } from '@udp/qc-schema';

/** Namespace of our own additions (provenance) inside the schema's lax ExtensionProperties. */
export const PROVENANCE_NS = 'tag:udp.example,2026:qc-catalogue-provenance';

/** An item version with the versions its ItemInfo lists. */
export interface ItemVersionView {
  item: QcItemDefinition;
  versions: string[];
}

type XmlNode = Record<string, unknown>;

const builder = new XMLBuilder({
  format: true,
  indentBy: '  ',
  suppressEmptyNode: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
});
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const ROOT_NAMESPACES = { '@_xmlns:qcc': QCC_NS, '@_xmlns:qc': QC_NS };

/** The value elements of a parameter, in schema order; an element without a value is left out (spec rule 2). */
function valueElements(p: QcParameter, kind: 'input' | 'output'): XmlNode {
  const node: XmlNode = {};
  if (kind === 'input' && p.DefaultValue) node['qc:DefaultValue'] = p.DefaultValue;
  if (p.ValueRange) node['qc:ValueRange'] = p.ValueRange;
  if (p.Type) node['qc:Type'] = p.Type;
  if (p.Unit) node['qc:Unit'] = p.Unit;
  if (p.Representation) node['qc:Representation'] = p.Representation;
  return node;
}

function parameter(p: QcParameter, kind: 'input' | 'output'): XmlNode {
  return {
    'qc:Name': p.Name,
    'qc:Description': p.Description,
    ...(p.Remarks && { 'qc:Remarks': p.Remarks }),
    'qc:HasLocator': String(p.HasLocator),
    'qc:InReports': p.InReports,
    'qc:InChecks': p.InChecks,
    ...valueElements(p, kind),
  };
}

const list = (wrapper: string, element: string, values: unknown[]): XmlNode =>
  values.length ? { [wrapper]: { [element]: values } } : { [wrapper]: '' };

function itemDefinition(item: QcItemDefinition): XmlNode {
  return {
    'qc:EBUQCID': item.ID,
    'qc:EBUQCName': item.Name,
    'qc:EBUQCVersion': item.Version,
    'qc:Status': item.Status,
    'qc:UsableAs': item.UsableAs.join(' '),
    ...(item.Description && { 'qc:Description': item.Description }),
    'qc:Definition': item.Definition,
    ...(item.Remarks && { 'qc:Remarks': item.Remarks }),
    'qc:Layer': item.Layer,
    'qc:Category': item.Category,
    'qc:EssenceType': item.EssenceType,
    ...list('qc:Aliases', 'qc:Alias', item.Aliases),
    ...list('qc:Tags', 'qc:Tag', item.Tags),
    ...list(
      'qc:References',
      'qc:Reference',
      item.References.map((r) => ({
        ...(r.URI && { 'qc:URI': r.URI }),
        'qc:Name': r.Name,
        ...(r.Remark && { 'qc:Remark': r.Remark }),
      })),
    ),
    ...list(
      'qc:Examples',
      'qc:Example',
      item.TextExamples.map((e) => ({ 'qc:Contents': e.Contents, ...(e.Remark && { 'qc:Remark': e.Remark }) })),
    ),
    ...list(
      'qc:Inputs',
      'qc:Input',
      item.InputParameters.map((p) => parameter(p, 'input')),
    ),
    ...list(
      'qc:Outputs',
      'qc:Output',
      item.OutputParameters.map((p) => parameter(p, 'output')),
    ),
    'qc:ExtensionProperties': {
      'prov:Provenance': {
        '@_xmlns:prov': PROVENANCE_NS,
        'prov:Source': item.Source,
        ...(item.Completed.length && { 'prov:Completed': item.Completed.join(' ') }),
      },
    },
  };
}

const image = (size: number, location: string) => ({ 'qcc:Source': { 'qcc:Width': size, 'qcc:Height': size, 'qcc:Location': location } });

/** The card a catalogue browser shows; the images are the layer icons this service serves. */
function card(item: QcItemDefinition): XmlNode {
  const icon = `/api/v2/icons/${item.Layer}.svg`;
  return {
    'qcc:Language': 'en',
    'qcc:Title': item.Name,
    'qcc:Line1': `${item.ID}, version ${item.Version}`,
    'qcc:Line2': `${item.Layer}, ${item.EssenceType}`,
    'qcc:Line3': `category: ${item.Category}`,
    'qcc:Line4': `usable as: ${item.UsableAs.join(', ')}`,
    'qcc:Icon': image(64, icon),
    'qcc:FullImage': image(512, icon),
  };
}

function itemInfo({ item, versions }: ItemVersionView): XmlNode {
  return {
    'qcc:ThisVersion': item.Version,
    'qcc:Versions': { 'qcc:Version': versions },
    'qcc:Card': card(item),
    'qcc:Item': itemDefinition(item),
  };
}

/** `qcc:ItemInfo` as a document of its own (single item endpoints). */
export function itemInfoXml(view: ItemVersionView): string {
  return DECLARATION + builder.build({ 'qcc:ItemInfo': { ...ROOT_NAMESPACES, ...itemInfo(view) } });
}

/** `qcc:Items` with one ItemInfo per item (the list endpoint). */
export function itemsXml(views: ItemVersionView[]): string {
  const body = views.length ? { 'qcc:ItemInfo': views.map(itemInfo) } : {};
  return DECLARATION + builder.build({ 'qcc:Items': { ...ROOT_NAMESPACES, ...body } });
}

function parameterJson(p: QcParameter): QcItemJson['InputParameters'][number] {
  return {
    Name: p.Name,
    Description: p.Description,
    Remarks: p.Remarks ?? '',
    HasLocator: p.HasLocator ? 'true' : 'false',
    InReports: p.InReports,
    InChecks: p.InChecks,
    ...(p.DefaultValue && { DefaultValue: p.DefaultValue }),
    ...(p.ValueRange && { ValueRange: p.ValueRange }),
    ...(p.Type && { Type: p.Type }),
    ...(p.Unit && { Unit: p.Unit }),
    ...(p.Representation && { Representation: p.Representation }),
  };
}

/** The JSON rendition: the spec's field names, strings where the spec says string. */
export function itemJson({ item, versions }: ItemVersionView): QcItemJson {
  return {
    ID: item.ID,
    Name: item.Name,
    Version: item.Version,
    Versions: versions,
    Status: item.Status,
    UsableAs: item.UsableAs.join(' '),
    Description: item.Description ?? '',
    Definition: item.Definition,
    Remarks: item.Remarks ?? '',
    Layer: item.Layer,
    Category: item.Category,
    EssenceType: item.EssenceType,
    Aliases: item.Aliases,
    Tags: item.Tags,
    References: item.References.map((r) => ({ URI: r.URI ?? null, Name: r.Name, Remark: r.Remark ?? '' })),
    TextExamples: item.TextExamples.map((e) => ({ Contents: e.Contents, Remark: e.Remark ?? '' })),
    InputParameters: item.InputParameters.map(parameterJson),
    OutputParameters: item.OutputParameters.map(parameterJson),
    Source: item.Source,
    Completed: item.Completed,
  };
}

export function itemsJson(views: ItemVersionView[]): QcItemsJson {
  return { Items: views.map(itemJson) };
}
