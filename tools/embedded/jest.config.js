// The qc-schema preset: the host imports every app, catalogue-svc's .xsd schemas included.
module.exports = { ...require('../../libs/qc-schema/jest.preset.js'), displayName: 'embedded', rootDir: __dirname };
