// The baseline: a bare node:http server answering with the same bytes as the system would.
// `node bench/bare-server.mjs <answers.json>`, answers = { pages: { <authorization header>: <body> }, other: <body> }:
// a GET gets the page of the user its Authorization header names (the first page for any other header), anything
// else gets `other` (a write's answer). Prints its port on stdout.
import http from 'node:http';
import { readFileSync } from 'node:fs';

const answers = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const pages = new Map(Object.entries(answers.pages).map(([auth, body]) => [auth, Buffer.from(body)]));
const firstPage = pages.values().next().value;
const other = Buffer.from(answers.other ?? '');
const server = http.createServer((req, res) => {
  req.resume();
  const body = req.method === 'GET' ? (pages.get(req.headers.authorization) ?? firstPage) : other;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
