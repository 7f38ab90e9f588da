// Shared jest settings: swc for speed, path aliases from tsconfig.base.json.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias}$`] = path.join(__dirname, target);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
    // ESM-only packages (jose, archiver and its own ESM dependencies) are compiled to CommonJS for jest; Node itself loads them natively.
    '^.+\\.js$': ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(jose|archiver|zip-stream|compress-commons|crc32-stream|is-stream)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testMatch: ['**/*.spec.ts'],
  testTimeout: 30000,
  reporters: ['default', path.join(__dirname, 'tools', 'jest-results-reporter.js')],
  // The SQLite stores' worker threads bundled on a Node that cannot run their TypeScript sources (tools/jest-global-setup.js).
  globalSetup: path.join(__dirname, 'tools', 'jest-global-setup.js'),
  globalTeardown: path.join(__dirname, 'tools', 'jest-global-teardown.js'),
};
