// The bare baseline of bench/live-sync-idle.mjs: node:http answering every request with an event stream it keeps open
// (the head, `retry` and one event, as a live-sync stream starts). Prints its port; on each IPC message, a full GC and
// then its memory. Run by live-sync-idle.mjs with --expose-gc.
import http from 'node:http';

const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  res.write('retry: 2000\n\nevent: ready\nid: c1.x\ndata: {"cursor":"c1.x"}\n\n');
});
server.maxConnections = Number(process.argv[2] ?? 20_000);
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
process.on('message', () => {
  globalThis.gc();
  globalThis.gc();
  const { rss, heapUsed } = process.memoryUsage();
  process.send({ rss: rss / 2 ** 20, heap: heapUsed / 2 ** 20 });
});
process.on('disconnect', () => process.exit(0));
