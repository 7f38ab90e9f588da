module.exports = { ...require('../../jest.preset.js'), displayName: 'profile-svc', rootDir: __dirname };
