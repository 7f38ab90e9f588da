// The baseline: a bare node:http server answering every request with the same bytes.
import http from 'node:http';
import { readFileSync } from 'node:fs';

const body = readFileSync(process.argv[2]);
const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
