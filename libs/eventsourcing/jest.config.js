module.exports = { ...require('../../jest.preset.js'), displayName: 'eventsourcing', rootDir: __dirname };
