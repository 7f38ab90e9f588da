import { busContract } from './bus.contract';
import { InProcessBus } from './in-process';

busContract('in-process', async () => new InProcessBus(5));

describe('in-process bus retention', () => {
  const numbers = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ key: 'k', value: { n: from + i } }));
  const received = async (bus: InProcessBus, topic: string, group: string, count: number) => {
    const got: number[] = [];
    await bus.subscribe(topic, group, async (m) => void got.push(m.value.n as number));
    for (let i = 0; i < 100 && got.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    return got;
  };

  it('given a topic nobody consumes, when many messages are published, then a late group gets the newest ones kept, in order', async () => {
    const bus = new InProcessBus(5, 10);
    await bus.publish('t', numbers(0, 35));
    const got = await received(bus, 't', 'late', 10);
    // Dropped in steps of `retained`: at least the newest 10, at most 20 kept.
    expect(got.length).toBeGreaterThanOrEqual(10);
    expect(got.length).toBeLessThanOrEqual(20);
    expect(got).toEqual(numbers(35 - got.length, 35).map((m) => m.value.n));
    await bus.close();
  });

  it('never drops a message a subscribed group has not consumed yet, however many are published', async () => {
    const bus = new InProcessBus(5, 10);
    const consumer = await bus.subscribe('t', 'slow', async () => undefined);
    await consumer.stop();
    await bus.publish('t', numbers(0, 50));
    expect(await received(bus, 't', 'slow', 50)).toEqual(numbers(0, 50).map((m) => m.value.n));
    await bus.close();
  });
});
