import { LastWriteFailure } from './write-failure';

describe('LastWriteFailure (what a store health check remembers of its writes)', () => {
  it('remembers a failed write until one succeeds', () => {
    const failures = new LastWriteFailure();
    expect(failures.current()).toBeNull();
    failures.failed(new Error('database or disk is full'));
    expect(failures.current()).toBe('database or disk is full');
    failures.succeeded();
    expect(failures.current()).toBeNull();
  });

  it('forgets it after forgetAfterMs, for a store that cannot try a write of its own', () => {
    const clock = { now: 0 };
    const failures = new LastWriteFailure(30_000, () => clock.now);
    failures.failed('No space left on device');
    clock.now = 30_000;
    expect(failures.current()).toBe('No space left on device');
    clock.now = 30_001;
    expect(failures.current()).toBeNull();
  });
});
