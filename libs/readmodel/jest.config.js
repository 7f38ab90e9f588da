module.exports = { ...require('../../jest.preset.js'), displayName: 'readmodel', rootDir: __dirname };
