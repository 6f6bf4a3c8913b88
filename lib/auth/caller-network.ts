/**
 * The caller network allowlist: a second layer in front of the secret. The
 * API server puts a webhook's URL, secret segment included, into the error a
 * pod creator sees when a call fails at the transport level (a timeout, a
 * reset, a TLS failure), so the secret alone cannot keep the Function URLs
 * private. With an allowlist, a caller outside the cluster's egress addresses
 * is turned away with the same bare 404 as a stranger without the secret,
 * whatever it presents.
 *
 * Entries are IPv4 or IPv6 addresses or CIDR blocks. An IPv4 address written
 * as IPv4-mapped IPv6 (`::ffff:10.1.2.3`, as a dual-stack socket reports it)
 * is checked as the IPv4 address it is.
 */
import { BlockList, isIP } from 'node:net';

/** The allowlist cannot be used; start-up (or synth) stops with this message. */
export class CallerNetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CallerNetworkError';
  }
}

export interface CallerNetworks {
  /** The entries as given, normalised (`10.0.0.0/8`), for logs. */
  readonly entries: readonly string[];
  /** Whether a request from `address` may go on to the secret check; an unknown address never does. */
  allows(address: string | undefined): boolean;
}

const MAPPED_DOTTED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;
const MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address an IPv4-mapped IPv6 address stands for, else the address itself. */
export function unmapIpv4(address: string): string {
  const dotted = MAPPED_DOTTED.exec(address);
  if (dotted?.[1] !== undefined && isIP(dotted[1]) === 4) return dotted[1];
  const hex = MAPPED_HEX.exec(address);
  if (hex?.[1] !== undefined && hex[2] !== undefined) {
    const high = Number.parseInt(hex[1], 16);
    const low = Number.parseInt(hex[2], 16);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return address;
}

/** One entry as an address family, base address and prefix length. */
function parseEntry(entry: string, what: string): { family: 'ipv4' | 'ipv6'; address: string; prefix: number } {
  const slash = entry.indexOf('/');
  const rawAddress = slash === -1 ? entry : entry.slice(0, slash);
  const rawPrefix = slash === -1 ? undefined : entry.slice(slash + 1);
  const version = isIP(rawAddress);
  if (version === 0) throw new CallerNetworkError(`${what}: ${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR block (e.g. 203.0.113.7 or 198.51.100.0/24)`);
  const max = version === 4 ? 32 : 128;
  const prefix = rawPrefix === undefined ? max : /^\d{1,3}$/.test(rawPrefix) ? Number(rawPrefix) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) throw new CallerNetworkError(`${what}: ${JSON.stringify(entry)} has a prefix length that is not 0-${max}`);
  if (version === 6) {
    const unmapped = unmapIpv4(rawAddress);
    // ::ffff:a.b.c.d/n names IPv4 addresses: check them as IPv4.
    if (unmapped !== rawAddress && prefix >= 96) return { family: 'ipv4', address: unmapped, prefix: prefix - 96 };
  }
  return { family: version === 4 ? 'ipv4' : 'ipv6', address: rawAddress, prefix };
}

/**
 * The allowlist from a comma- (or white-space-) separated list; undefined when
 * the list is empty, meaning any source address may go on to the secret check.
 * @throws CallerNetworkError naming the first bad entry.
 */
export function parseCallerNetworks(text: string | undefined, what: string): CallerNetworks | undefined {
  const entries = (text ?? '').split(/[\s,]+/).filter((e) => e !== '');
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  const normalised: string[] = [];
  for (const entry of entries) {
    const { family, address, prefix } = parseEntry(entry, what);
    list.addSubnet(address, prefix, family);
    normalised.push(`${address}/${prefix}`);
  }
  return {
    entries: normalised,
    allows(address) {
      if (address === undefined || address === '') return false;
      const plain = unmapIpv4(address);
      const version = isIP(plain);
      if (version === 0) return false;
      return list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
