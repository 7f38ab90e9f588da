module.exports = { ...require('../../jest.preset.js'), displayName: 'lint-rules', rootDir: __dirname };
