module.exports = { ...require('../../jest.preset.js'), displayName: 'playlist-svc', rootDir: __dirname };
