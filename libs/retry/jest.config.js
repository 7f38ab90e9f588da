module.exports = { ...require('../../jest.preset.js'), displayName: 'retry', rootDir: __dirname };
