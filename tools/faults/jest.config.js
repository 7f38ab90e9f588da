// One suite at a time (--runInBand in project.json): each one stops a server that every other suite would need.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'faults',
  rootDir: __dirname,
  globalSetup: '<rootDir>/global-setup.js',
  globalTeardown: '<rootDir>/global-teardown.js',
};
