import { parseTrustedCallers } from './edge';

describe('TRACE_TRUSTED_CALLERS', () => {
  it('matches addresses and ranges of both families, nothing by default', () => {
    const list = parseTrustedCallers('10.1.0.0/16, 192.168.0.7 ,fd00::/8');
    expect(list.check('10.1.200.3', 'ipv4')).toBe(true);
    expect(list.check('10.2.0.1', 'ipv4')).toBe(false);
    expect(list.check('192.168.0.7', 'ipv4')).toBe(true);
    expect(list.check('fd12::1', 'ipv6')).toBe(true);
    expect(parseTrustedCallers('').check('127.0.0.1', 'ipv4')).toBe(false);
    expect(() => parseTrustedCallers('localhost')).toThrow(/TRACE_TRUSTED_CALLERS: localhost/);
  });
});
