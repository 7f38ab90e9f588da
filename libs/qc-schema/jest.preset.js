// The shared preset plus .xsd files imported as text (esbuild does the same with loader `text`).
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  transform: { ...preset.transform, '\\.xsd$': require.resolve('./jest-text-transform.js') },
  moduleFileExtensions: [...preset.moduleFileExtensions, 'xsd'],
};
