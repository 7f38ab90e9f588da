module.exports = { ...require('../../jest.preset.js'), displayName: 'export-worker', rootDir: __dirname };
