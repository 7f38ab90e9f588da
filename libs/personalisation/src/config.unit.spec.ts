import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PersonalisationConfigError, loadPersonalisationConfig } from './config';
import { loadCodopsSecrets } from './secrets';

describe('the personalisation configuration', () => {
  it('ships the demo codops zzebu with continue_watching (A/B, fallback trending) and trending', () => {
    const config = loadPersonalisationConfig({});
    expect(config.codops.zzebu.endpoints.continue_watching).toMatchObject({
      components: { 'continue-watching': 50, 'recently-watched': 50 },
      fallback: 'trending',
    });
    expect(Object.keys(config.codops.zzebu.endpoints).sort()).toEqual(['continue_watching', 'trending']);
  });

  it('is replaced by PERSONALISATION_CONFIG or a file, and refuses unknown components and bad values with their path', () => {
    const only = { codops: { abc: { endpoints: { one: { components: { trending: 1 } } } } } };
    expect(Object.keys(loadPersonalisationConfig({ PERSONALISATION_CONFIG: JSON.stringify(only) }).codops)).toEqual(['abc']);
    const file = join(mkdtempSync(join(tmpdir(), 'udp-pers-')), 'p.json');
    writeFileSync(file, JSON.stringify(only));
    expect(loadPersonalisationConfig({ PERSONALISATION_CONFIG_FILE: file }).codops.abc.tracing).toBe(true);
    const unknown = { codops: { abc: { endpoints: { one: { components: { nope: 1 } } } } } };
    expect(() => loadPersonalisationConfig({ PERSONALISATION_CONFIG: JSON.stringify(unknown) })).toThrow(
      /codops\.abc\.endpoints\.one: unknown component nope/,
    );
    const bad = { codops: { abc: { endpoints: { one: { components: { trending: -1 } } } } } };
    expect(() => loadPersonalisationConfig({ PERSONALISATION_CONFIG: JSON.stringify(bad) })).toThrow(PersonalisationConfigError);
    expect(() => loadPersonalisationConfig({ PERSONALISATION_CONFIG: '{' })).toThrow(PersonalisationConfigError);
  });

  it("refuses a component or fallback named after an object's own names (constructor, toString...)", () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const components = { codops: { abc: { endpoints: { one: { components: { [name]: 1 } } } } } };
      expect(() => loadPersonalisationConfig({ PERSONALISATION_CONFIG: JSON.stringify(components) })).toThrow(PersonalisationConfigError);
      const fallback = { codops: { abc: { endpoints: { one: { components: { trending: 1 }, fallback: name } } } } };
      expect(() => loadPersonalisationConfig({ PERSONALISATION_CONFIG: JSON.stringify(fallback) })).toThrow(PersonalisationConfigError);
    }
  });

  it('reads CODOPS_SECRETS, or makes one secret per codops in DATA_DIR', () => {
    expect(loadCodopsSecrets(['zzebu'], { CODOPS_SECRETS: 'zzebu:0123456789abcdef,other:fedcba9876543210' }, '/nonexistent')).toEqual(
      new Map([
        ['zzebu', '0123456789abcdef'],
        ['other', 'fedcba9876543210'],
      ]),
    );
    expect(() => loadCodopsSecrets([], { CODOPS_SECRETS: 'zzebu:short' }, '/x')).toThrow(/at least 16/);
    const dir = mkdtempSync(join(tmpdir(), 'udp-secrets-'));
    const first = loadCodopsSecrets(['zzebu'], {}, dir);
    expect(first.get('zzebu')).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(loadCodopsSecrets(['zzebu'], {}, dir)).toEqual(first);
  });
});
