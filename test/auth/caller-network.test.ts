import { describe, expect, it } from '@jest/globals';
import { CallerNetworkError, parseCallerNetworks, unmapIpv4 } from '../../lib/auth/caller-network.ts';
import { callerNetworksFromEnv } from '../../lib/auth/caller-config.ts';

describe('parseCallerNetworks', () => {
  it('is undefined (any source) when the list is unset or empty', () => {
    expect(parseCallerNetworks(undefined, 'X')).toBeUndefined();
    expect(parseCallerNetworks('', 'X')).toBeUndefined();
    expect(parseCallerNetworks(' , ,', 'X')).toBeUndefined();
  });

  const networks = parseCallerNetworks('203.0.113.7, 198.51.100.0/24,2001:db8:1::/48 ::ffff:192.0.2.0/120', 'ALLOWED_CALLER_CIDRS');

  it('normalises the entries for logs', () => {
    expect(networks?.entries).toEqual(['203.0.113.7/32', '198.51.100.0/24', '2001:db8:1::/48', '192.0.2.0/24']);
  });

  it.each([
    ['a single address', '203.0.113.7'],
    ['an address inside an IPv4 block', '198.51.100.200'],
    ['the first and last of the block', '198.51.100.0'],
    ['an IPv6 address inside the block', '2001:db8:1:ffff::1'],
    ['an IPv4 address as IPv4-mapped IPv6 (a dual-stack socket)', '::ffff:198.51.100.9'],
    ['an IPv4-mapped address in hex form', '::ffff:cb00:7107'],
    ['an address of a block given as IPv4-mapped IPv6', '192.0.2.44'],
  ])('allows %s', (_why, address) => {
    expect(networks?.allows(address)).toBe(true);
  });

  it.each([
    ['the next address after a single one', '203.0.113.8'],
    ['an address outside the blocks', '198.51.101.1'],
    ['an IPv6 address outside the block', '2001:db8:2::1'],
    ['a mapped address outside', '::ffff:10.0.0.1'],
    ['no address at all', undefined],
    ['an empty address', ''],
    ['something that is not an address', 'localhost'],
  ])('refuses %s', (_why, address) => {
    expect(networks?.allows(address)).toBe(false);
  });

  it('allows every address with 0.0.0.0/0 and ::/0, and loopback with 127.0.0.1', () => {
    expect(parseCallerNetworks('0.0.0.0/0', 'X')?.allows('8.8.8.8')).toBe(true);
    expect(parseCallerNetworks('::/0', 'X')?.allows('2001:db8::1')).toBe(true);
    expect(parseCallerNetworks('127.0.0.1', 'X')?.allows('::ffff:127.0.0.1')).toBe(true);
  });

  it.each([
    ['a host name', 'example.com', '"example.com" is not an IPv4 or IPv6 address or CIDR block'],
    ['an IPv4 prefix over 32', '10.0.0.0/33', '"10.0.0.0/33" has a prefix length that is not 0-32'],
    ['an IPv6 prefix over 128', '2001:db8::/129', '"2001:db8::/129" has a prefix length that is not 0-128'],
    ['an empty prefix', '10.0.0.0/', '"10.0.0.0/" has a prefix length that is not 0-32'],
    ['a signed prefix', '10.0.0.0/-1', '"10.0.0.0/-1" has a prefix length that is not 0-32'],
    ['a truncated address', '10.0.0/8', '"10.0.0/8" is not an IPv4 or IPv6 address'],
  ])('refuses %s, naming the entry', (_why, entry, message) => {
    const parse = () => parseCallerNetworks(`203.0.113.7,${entry}`, 'ALLOWED_CALLER_CIDRS');
    expect(parse).toThrow(CallerNetworkError);
    expect(parse).toThrow(`ALLOWED_CALLER_CIDRS: ${message}`);
  });

  it('is read from ALLOWED_CALLER_CIDRS', () => {
    expect(callerNetworksFromEnv({ ALLOWED_CALLER_CIDRS: '10.0.0.0/8' })?.allows('10.9.9.9')).toBe(true);
    expect(callerNetworksFromEnv({})).toBeUndefined();
  });
});

describe('unmapIpv4', () => {
  it('unwraps IPv4-mapped IPv6 and leaves other addresses alone', () => {
    expect(unmapIpv4('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(unmapIpv4('::FFFF:0a01:0203')).toBe('10.1.2.3');
    expect(unmapIpv4('10.1.2.3')).toBe('10.1.2.3');
    expect(unmapIpv4('2001:db8::1')).toBe('2001:db8::1');
  });
});
