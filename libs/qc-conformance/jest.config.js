module.exports = { ...require('../qc-schema/jest.preset.js'), displayName: 'qc-conformance', rootDir: __dirname };
