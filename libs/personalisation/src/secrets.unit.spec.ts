import { FailureLimiter, lockoutKey } from './secrets';

describe('the debug-secret lockout', () => {
  it('keys by codops and client, an IPv6 client by its /64, an IPv4-mapped one by its IPv4 address', () => {
    expect(lockoutKey('zzebu', '203.0.113.7')).not.toBe(lockoutKey('zzoff', '203.0.113.7'));
    expect(lockoutKey('zzebu', '203.0.113.7')).not.toBe(lockoutKey('zzebu', '203.0.113.8'));
    expect(lockoutKey('zzebu', '::ffff:203.0.113.7')).toBe(lockoutKey('zzebu', '203.0.113.7'));
    expect(lockoutKey('zzebu', '2001:db8:1:2::1')).toBe(lockoutKey('zzebu', '2001:db8:1:2:ffff:ffff:ffff:fffe'));
    expect(lockoutKey('zzebu', '2001:0db8:0001:0002:0:0:0:9')).toBe(lockoutKey('zzebu', '2001:db8:1:2::1'));
    expect(lockoutKey('zzebu', '2001:db8:1:2::1')).not.toBe(lockoutKey('zzebu', '2001:db8:1:3::1'));
    expect(lockoutKey('zzebu', 'fe80::1%eth0')).toBe(lockoutKey('zzebu', 'fe80::2'));
    expect(lockoutKey('zzebu', undefined)).toBe('zzebu\u0000');
  });

  it('given a client locked out, when many other keys fail past the bound, then the lockout holds (the oldest entry not locked out is forgotten first)', () => {
    let now = 0;
    const limiter = new FailureLimiter(3, 60_000, () => now); // at most 100 000 keys
    for (let i = 0; i < 3; i++) limiter.fail('attacker');
    expect(limiter.blocked('attacker')).toBe(60);
    // The attacker's other addresses: a flood of fresh keys that used to clear every entry at once.
    for (let i = 0; i < 50_000; i++) limiter.fail(`other-${i}`);
    now = 1000;
    limiter.fail('attacker');
    for (let i = 50_000; i < 100_500; i++) limiter.fail(`other-${i}`);
    expect(limiter.blocked('attacker')).toBe(59);
    now = 61_000;
    expect(limiter.blocked('attacker')).toBeNull();
  });
});
