module.exports = { ...require('../../jest.preset.js'), displayName: 'history-svc', rootDir: __dirname };
