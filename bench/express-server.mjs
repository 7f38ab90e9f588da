// The framework's ceiling: an express 5 app answering with the same bytes as bare-server.mjs (same answers file, same
// choice by Authorization header), so the bench can print what express itself costs beside the bare figure.
// `node bench/express-server.mjs <answers.json>`; prints its port on stdout. Routes as the gateway has them (the
// history list and a write), one `res.send` each. The ETag setting is off: express would hash every body (sha1 of
// 12 KB), which the system does not do (its ETag is the user's version), and bare-server sends none.
import { readFileSync } from 'node:fs';
import express from 'express';

const answers = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const pages = new Map(Object.entries(answers.pages).map(([auth, body]) => [auth, Buffer.from(body)]));
const firstPage = pages.values().next().value;
const other = Buffer.from(answers.other ?? '');
const send = (res, body) => res.type('application/json; charset=utf-8').send(body);

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/api/history/v2', (req, res) => send(res, pages.get(req.headers.authorization) ?? firstPage));
app.post('/api/history/v2', (req, res) => {
  req.resume();
  send(res, other);
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
server.keepAliveTimeout = 65_000;
