module.exports = { ...require('../../libs/qc-schema/jest.preset.js'), displayName: 'system-tests', rootDir: __dirname };
