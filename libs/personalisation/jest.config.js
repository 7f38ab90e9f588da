module.exports = { ...require('../../jest.preset.js'), displayName: 'personalisation', rootDir: __dirname };
