module.exports = { ...require('../../jest.preset.js'), displayName: 'test-tooling', rootDir: __dirname };
