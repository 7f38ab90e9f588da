// Container health check (Docker HEALTHCHECK, compose's service_healthy): GET http://127.0.0.1:$PORT/readyz must
// answer 200: the app's own stores and read-model projections (not the bus, not other services; docs/deployment.md).
// The slim Node image has no curl, so this runs with node. Without PORT, the app's default port is used.
'use strict';
const http = require('node:http');

const DEFAULT_PORTS = {
  gateway: 8080,
  'history-svc': 8081,
  'playlist-svc': 8082,
  'preference-svc': 8083,
  'profile-svc': 8084,
  'catalogue-svc': 8085,
  'export-worker': 8086,
};
const port = Number(process.env.PORT || DEFAULT_PORTS[process.env.APP] || 8080);
const request = http.get({ host: '127.0.0.1', port, path: '/readyz', timeout: 4000 }, (response) => {
  response.resume();
  process.exit(response.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error('timeout')));
request.on('error', (error) => {
  process.stderr.write(`health check: ${error.message}\n`);
  process.exit(1);
});
