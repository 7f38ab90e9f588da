import { QC_ITEM_ID, QC_PARAMETER_NAME, QC_VERSION, type QcItemDefinition } from '@udp/contracts';

/** The layer each ID suffix stands for (EBU catalogue numbering). */
export const LAYER_OF_SUFFIX: Record<string, QcItemDefinition['Layer']> = {
  F: 'bitstream',
  W: 'wrapper',
  X: 'crosscheck',
  B: 'baseband',
  BI: 'baseband',
};

/** `0010F-LoudnessMetadata`: a crosscheck input naming the item and output whose value it takes. */
export const CROSSCHECK_INPUT = /^(\d{4}[A-Z]{1,3})-([0-9A-Za-z]+)$/;

/**
 * What keeps an item version from being published, in words (empty: publishable). These are the
 * catalogue's own rules on top of the schema: the XSD cannot say that a check needs a CheckResult.
 */
export function itemProblems(item: QcItemDefinition): string[] {
  const problems: string[] = [];
  if (!QC_ITEM_ID.test(item.ID)) problems.push(`ID ${item.ID} is not four digits followed by layer letters`);
  if (!QC_VERSION.test(item.Version)) problems.push(`Version ${item.Version} is not MAJOR.MINOR[.PATCH]`);
  const suffix = item.ID.slice(4);
  if (LAYER_OF_SUFFIX[suffix] && LAYER_OF_SUFFIX[suffix] !== item.Layer) {
    problems.push(`Layer ${item.Layer} does not match the ID suffix ${suffix} (${LAYER_OF_SUFFIX[suffix]})`);
  }
  for (const p of [...item.InputParameters, ...item.OutputParameters]) {
    if (!QC_PARAMETER_NAME.test(p.Name)) problems.push(`parameter name "${p.Name}" is not letters, digits and dashes`);
  }
  if (item.UsableAs.includes('check')) {
    const result = item.OutputParameters.find((p) => p.Name === 'CheckResult');
    if (!result) problems.push('usable as a check but has no CheckResult output');
    else if (result.Type !== 'boolean') problems.push(`CheckResult is of type ${result.Type ?? 'none'}, not boolean`);
  }
  if (item.Layer === 'crosscheck') {
    const number = item.ID.slice(0, 4);
    const sources = new Set(item.InputParameters.map((p) => CROSSCHECK_INPUT.exec(p.Name)?.[1]));
    for (const layer of ['F', 'W']) {
      if (!sources.has(`${number}${layer}`)) problems.push(`crosscheck item takes no value of item ${number}${layer}`);
    }
  }
  return problems;
}

/** Same content, same fingerprint, whatever the key order (a version's content never changes). */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Orders versions numerically: 10.0 comes after 9.1. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
