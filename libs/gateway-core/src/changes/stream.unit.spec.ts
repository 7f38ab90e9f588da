import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { ChangeStream } from './stream';

/** A response whose reader takes bytes only when the test says so: `writableLength` is what it has not taken. */
class HeldResponse extends EventEmitter {
  headersSent = false;
  writableLength = 0;
  written = '';
  socket = null;
  writeHead() {
    this.headersSent = true;
    return this;
  }
  write(chunk: string) {
    this.written += chunk;
    this.writableLength += Buffer.byteLength(chunk);
    return true;
  }
  end() {
    return this;
  }
  /** The reader takes everything written so far. */
  drain() {
    this.writableLength = 0;
  }
}

const streamOn = (res: HeldResponse, maxBufferBytes: number) => {
  const closes: string[] = [];
  const stream = new ChangeStream('alice', res as unknown as Response, maxBufferBytes, 0, (_s, reason) => closes.push(reason));
  return { stream, closes };
};

describe('a change stream and its unread bytes', () => {
  it('sends an event larger than the bound to a reader that has taken what came before', () => {
    const res = new HeldResponse();
    const { stream, closes } = streamOn(res, 1000);
    stream.send('preference', { key: 'big', document: { text: 'x'.repeat(3000) }, deleted: false }, 'c1');
    expect(closes).toEqual([]);
    expect(res.written).toContain('event: preference\nid: c1\n');
    res.drain();
    stream.send('preference', { key: 'big', document: { text: 'y'.repeat(3000) }, deleted: false }, 'c2');
    expect(closes).toEqual([]);
  });

  it('closes a reader still holding more than the bound unread when the next event is due, with a named close', () => {
    const res = new HeldResponse();
    const { stream, closes } = streamOn(res, 1000);
    stream.send('history', { item_id: 'x'.repeat(1500) }, 'c1');
    stream.send('history', { item_id: 'next' }, 'c2');
    expect(closes).toEqual(['slow-reader']);
    expect(res.written).toContain('event: close\ndata: {"reason":"slow-reader"');
    expect(res.written).not.toContain('"next"');
  });

  it('closes a reader that takes nothing for long at a heartbeat', () => {
    const res = new HeldResponse();
    const { stream, closes } = streamOn(res, 1000);
    stream.send('history', { item_id: 'x'.repeat(1500) }, 'c1');
    stream.heartbeat();
    expect(closes).toEqual(['slow-reader']);
  });
});
