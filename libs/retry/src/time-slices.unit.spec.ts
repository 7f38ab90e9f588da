import { nextTurn, timeSlices } from './time-slices';

const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('nextTurn', () => {
  it("leaves the work waiting past a turn's budget for the next turn, oldest first, that turn's timers before it", async () => {
    const order: string[] = [];
    const first = nextTurn().then(() => {
      order.push('first');
      // Due by the next turn, whose timers run before that turn's resumed work.
      setTimeout(() => order.push('timer'), 1);
      busyFor(5);
    });
    const second = nextTurn().then(() => order.push('second'));
    const third = nextTurn().then(() => order.push('third'));
    await Promise.all([first, second, third]);
    expect(order).toEqual(['first', 'timer', 'second', 'third']);
  });

  it('resumes short pieces of work in the same turn while the turn is under its budget', async () => {
    const order: Array<number | string> = [];
    const all = [1, 2, 3].map((n) => nextTurn().then(() => order.push(n)));
    setImmediate(() => order.push('queued after them'));
    await Promise.all(all);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([1, 2, 3, 'queued after them']);
  });

  it('gives two long pieces of work their slices in turn, the first asked first', async () => {
    const order: string[] = [];
    const work = async (name: string) => {
      const { slice } = timeSlices(1);
      for (let step = 0; step < 3; step++) {
        busyFor(2);
        order.push(`${name}${step}`);
        await slice();
      }
    };
    await Promise.all([work('a'), work('b')]);
    expect(order).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2']);
  });
});
