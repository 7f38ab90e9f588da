module.exports = { ...require('./jest.preset.js'), displayName: 'qc-schema', rootDir: __dirname };
