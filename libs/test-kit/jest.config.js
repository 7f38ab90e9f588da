module.exports = { ...require('../../jest.preset.js'), displayName: 'test-kit', rootDir: __dirname };
