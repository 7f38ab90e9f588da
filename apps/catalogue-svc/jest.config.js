module.exports = { ...require('../../libs/qc-schema/jest.preset.js'), displayName: 'catalogue-svc', rootDir: __dirname };
