import { emptyValueElements, parseItemInfo, parseItems } from './catalogue-xml';
import { countersOf, outcomeOf, overallOf, type CheckReport } from './report';

const info = (
  id: string,
  outputs: string,
) => `<c:ItemInfo><c:ThisVersion>1.0</c:ThisVersion><c:Versions><c:Version>1.0</c:Version></c:Versions>
<c:Item><q:EBUQCID>${id}</q:EBUQCID><q:EBUQCVersion>1.0</q:EBUQCVersion><q:UsableAs>check report</q:UsableAs><q:Layer>wrapper</q:Layer>
<q:Inputs/><q:Outputs>${outputs}</q:Outputs></c:Item></c:ItemInfo>`;
const output = (name: string, rest = '') => `<q:Output><q:Name>${name}</q:Name>${rest}</q:Output>`;

describe('reading catalogue XML, whatever the prefixes', () => {
  it('parses items, versions, usage and outputs', () => {
    const items = parseItems(
      `<c:Items xmlns:c="x" xmlns:q="y">${info('0001W', output('CheckResult', '<q:Type>boolean</q:Type>'))}</c:Items>`,
    );
    expect(items).toEqual([
      {
        id: '0001W',
        version: '1.0',
        thisVersion: '1.0',
        versions: ['1.0'],
        layer: 'wrapper',
        usableAs: ['check', 'report'],
        inputs: [],
        outputs: [{ kind: 'Output', name: 'CheckResult', type: 'boolean' }],
      },
    ]);
    expect(parseItemInfo(info('0002W', ''))?.id).toBe('0002W');
    expect(parseItems('<html/>')).toBeNull();
    expect(parseItemInfo('not xml <')).toBeNull();
  });

  it('finds empty value elements, one per element, and allows nil ones', () => {
    const xml = `<Items>${info('0001W', output('A', '<q:Type/><q:Unit></q:Unit><q:Representation xsi:nil="true"/><q:ValueRange>[0,1]</q:ValueRange>'))}${info('0002W', output('B', '<DefaultValue> </DefaultValue>'))}</Items>`;
    expect(emptyValueElements(xml)).toEqual([
      { itemId: '0001W', parameter: 'Output A', element: 'Type' },
      { itemId: '0001W', parameter: 'Output A', element: 'Unit' },
      { itemId: '0002W', parameter: 'Output B', element: 'DefaultValue' },
    ]);
  });
});

describe('report results', () => {
  const check = (result: CheckReport['result']) => ({ result }) as CheckReport;

  it('a fail-level finding fails a check, a warning warns it, none passes it', () => {
    expect(
      outcomeOf(
        [
          { level: 'warn', message: 'w' },
          { level: 'fail', message: 'f' },
        ],
        false,
      ),
    ).toBe('FAIL');
    expect(outcomeOf([{ level: 'warn', message: 'w' }], false)).toBe('WARN');
    expect(outcomeOf([], false)).toBe('PASS');
    expect(outcomeOf([{ level: 'fail', message: 'f' }], true)).toBe('IGNORED');
  });

  it('the overall result is the worst check result; ignored checks are only counted', () => {
    expect(overallOf([check('PASS'), check('IGNORED')])).toBe('PASS');
    expect(overallOf([check('PASS'), check('WARN')])).toBe('WARN');
    expect(overallOf([check('WARN'), check('FAIL')])).toBe('FAIL');
    expect(countersOf([check('PASS'), check('PASS'), check('WARN'), check('IGNORED')])).toEqual({ pass: 2, warn: 1, fail: 0, ignored: 1 });
  });
});
