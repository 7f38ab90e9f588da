module.exports = { ...require('../../jest.preset.js'), displayName: 'gateway-core', rootDir: __dirname };
