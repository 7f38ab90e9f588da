import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Adapter libraries and frameworks that domain code (apps/*/src/domain) must never import.
const ADAPTERS = [
  '@udp/eventstore',
  '@udp/readmodel',
  '@udp/bus',
  '@udp/runtime',
  '@udp/http-kit',
  '@udp/gateway-core',
  '@udp/telemetry',
  'express',
  'mongodb',
  'kafkajs',
  'better-sqlite3',
  'pg',
  '@kurrent/*',
];

// The two test libraries (libs/test-kit, libs/test-system): never in the code a service runs.
const TEST_ONLY = {
  group: ['@udp/test-kit', '@udp/test-system'],
  message: 'test helpers are for tests: import them from *.spec.ts, *.scenario.ts, *.contract.ts or src/testing/',
};

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', '.cache/**', '.nx/**', 'tools/servers/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            // An app depends on libraries only, never on another app.
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            // The embedded host: libraries like any app (host.ts alone starts the apps, see below).
            { sourceTag: 'type:host', onlyDependOnLibsWithTags: ['type:lib'] },
          ],
        },
      ],
    },
  },
  {
    // The embedded host is the composition root: it alone starts every app in one process. Its own tests may compose
    // apps the same way (a crash test seeds a service's streams by their names; an erasure test runs two real apps).
    files: ['tools/embedded/host.ts', 'tools/embedded/*.spec.ts'],
    rules: { '@nx/enforce-module-boundaries': 'off' },
  },
  {
    // SQLite (3.53) plans with the value bound to a bare `LIMIT ?`, so each new binding makes the statement prepare
    // itself again on its next run: a third of a history page's time in SQLite went there. `LIMIT +?` is read at run time.
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'tools/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['Literal[value=/LIMIT \\?/i]', 'TemplateElement[value.raw=/LIMIT \\?/i]'].map((selector) => ({
          selector,
          message: 'write `LIMIT +?`: a bare `LIMIT ?` makes SQLite prepare the statement again at every run',
        })),
      ],
    },
  },
  {
    // The whole-system tests build every service behind the gateway in one process, as the embedded host does.
    files: ['tools/system-tests/whole-system.ts'],
    rules: { '@nx/enforce-module-boundaries': 'off' },
  },
  {
    // Test helpers are for tests: specs, shared scenarios and contract suites, and a service's src/testing/ fixtures.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.scenario.ts', '**/*.contract.ts', 'apps/*/src/testing/**', 'libs/test-kit/**', 'libs/test-system/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [TEST_ONLY] }] },
  },
  {
    files: ['apps/*/src/domain/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ADAPTERS, message: 'domain code is pure: no adapters, no I/O, no frameworks' }, TEST_ONLY] },
      ],
    },
  },
];
