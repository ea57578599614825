import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to all its addresses (dns.lookup with all: true); tests may inject their own. */
export type ResolveHost = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolveHost: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** A url whose address may not receive webhooks; the message says why. */
export class UnsafeAddressError extends Error {}

export interface AddressPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: loopback, private and shared ranges allowed; link-local never. */
  allowPrivateNetworks: boolean;
  resolveHost: ResolveHost;
}

const PRIVATE_RANGES: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  uniqueLocal: 'a private',
  carrierGradeNat: 'a shared (100.64.0.0/10)',
};
const FORBIDDEN_RANGES: Record<string, string> = {
  linkLocal: 'a link-local',
  multicast: 'a multicast',
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
};

/** The IPv4 address an IPv6 address carries (IPv4-mapped, NAT64 or 6to4), if it carries one. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = address.range();
  const bytes = address.toByteArray();
  if (address.isIPv4MappedAddress() || range === 'ipv4Mapped' || range === 'rfc6052') {
    return new ipaddr.IPv4(bytes.slice(12, 16));
  }
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  return undefined;
}

/** The refused kind of this address under the policy (e.g. "a loopback address (::1)"), or undefined when allowed. */
export function refusalOf(address: string, allowPrivateNetworks: boolean): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') parsed = embeddedIpv4(parsed as ipaddr.IPv6) ?? parsed;
  const range = parsed.range();
  const forbidden = FORBIDDEN_RANGES[range];
  if (forbidden) return `${forbidden} address (${address})`;
  const privateRange = PRIVATE_RANGES[range];
  if (privateRange && !allowPrivateNetworks) return `${privateRange} address (${address})`;
  return undefined;
}

/** The host of a URL without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Resolves the url's host and checks every address it resolves to; returns the one to connect to, so the
 * connection goes to the address that was checked (a second resolution could answer differently: DNS
 * rebinding). Throws UnsafeAddressError when the host does not resolve or any address is refused.
 */
export async function resolveSafeAddress(url: URL, policy: AddressPolicy): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostOf(url);
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await policy.resolveHost(host);
    } catch {
      throw new UnsafeAddressError(`host ${host} could not be resolved`);
    }
    if (addresses.length === 0) throw new UnsafeAddressError(`host ${host} could not be resolved`);
  }
  for (const { address } of addresses) {
    const refusal = refusalOf(address, policy.allowPrivateNetworks);
    if (refusal) {
      throw new UnsafeAddressError(isIP(host) ? `${refusal} is not allowed` : `host ${host} resolves to ${refusal}, which is not allowed`);
    }
  }
  const chosen = addresses[0];
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
