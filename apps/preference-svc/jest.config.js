module.exports = { ...require('../../jest.preset.js'), displayName: 'preference-svc', rootDir: __dirname };
