module.exports = { ...require('../../jest.preset.js'), displayName: 'http-kit', rootDir: __dirname };
