module.exports = { ...require('../../jest.preset.js'), displayName: 'test-system', rootDir: __dirname };
