import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to all its addresses (dns.lookup with all: true); tests may inject their own. */
export type ResolveHost = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolveHost: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** A url whose address may not receive webhooks; the message says why. */
export class UnsafeAddressError extends Error {}

export interface AddressPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: loopback, private and shared ranges allowed; link-local and site-local never. */
  allowPrivateNetworks: boolean;
  resolveHost: ResolveHost;
}

const PRIVATE_RANGES: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  uniqueLocal: 'a private',
  carrierGradeNat: 'a shared (100.64.0.0/10)',
};
/** Refused whatever WEBHOOK_ALLOW_PRIVATE_NETWORKS says (DECISIONS §9, §11): the flag names loopback, private and shared only. */
const FORBIDDEN_RANGES: Record<string, string> = {
  deprecatedSiteLocal: 'a site-local (fec0::/10)',
  linkLocal: 'a link-local',
  multicast: 'a multicast',
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
};

/** NAT64 for local use (RFC 8215), whose IPv4 part depends on the network's prefix length: a private network. */
const LOCAL_NAT64 = ipaddr.parseCIDR('64:ff9b:1::/48');

/**
 * The IPv4 addresses an IPv6 address carries in any of its textual forms: IPv4-compatible (::a.b.c.d),
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4
 * (2002:aabb:ccdd::) and Teredo (its server and its obfuscated client). Each is refused as that IPv4
 * address would be: the host that answers may be the IPv4 one.
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const last = () => new ipaddr.IPv4(bytes.slice(12, 16));
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return [last()];
  // ::/96 other than :: and ::1 (their own ranges): the deprecated IPv4-compatible form.
  if (bytes.slice(0, 12).every((byte) => byte === 0) && range !== 'unspecified' && range !== 'loopback') return [last()];
  if (range === '6to4') return [new ipaddr.IPv4(bytes.slice(2, 6))];
  if (range === 'teredo') return [new ipaddr.IPv4(bytes.slice(4, 8)), new ipaddr.IPv4(bytes.slice(12, 16).map((byte) => byte ^ 0xff))];
  return [];
}

function refusalOfParsed(parsed: ipaddr.IPv4 | ipaddr.IPv6, allowPrivateNetworks: boolean): string | undefined {
  const range = parsed.range();
  const forbidden = FORBIDDEN_RANGES[range];
  if (forbidden) return forbidden;
  const privateRange = PRIVATE_RANGES[range] ?? (parsed.kind() === 'ipv6' && parsed.match(LOCAL_NAT64) ? 'a private (local-use NAT64)' : undefined);
  if (privateRange && !allowPrivateNetworks) return privateRange;
  return undefined;
}

/** The refused kind of this address under the policy (e.g. "a loopback address"), or undefined when allowed. */
export function refusalOf(address: string, allowPrivateNetworks: boolean): string | undefined {
  const parsed = ipaddr.parse(address);
  const carried = parsed.kind() === 'ipv6' ? embeddedIpv4(parsed as ipaddr.IPv6) : [];
  for (const candidate of [parsed, ...carried]) {
    const refusal = refusalOfParsed(candidate, allowPrivateNetworks);
    if (refusal) return `${refusal} address`;
  }
  return undefined;
}

/** The host of a URL without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** A host that is an address literal: refused with its kind (the client's own input), else its address. */
function checkedLiteral(host: string, policy: AddressPolicy): { address: string; family: 4 | 6 } | undefined {
  if (!isIP(host)) return undefined;
  const refusal = refusalOf(host, policy.allowPrivateNetworks);
  if (refusal) throw new UnsafeAddressError(`${host} is ${refusal}, which webhooks may not be sent to`);
  return { address: host, family: isIP(host) === 6 ? 6 : 4 };
}

/**
 * The one message for a name that resolves to a refused address and, at delivery, for one that does not
 * resolve: it never says what a name resolves to, so an error cannot map the server's internal network.
 */
function refusedName(host: string): UnsafeAddressError {
  return new UnsafeAddressError(`host ${host} does not resolve to public addresses only`);
}

/**
 * Resolves the url's host and checks every address it resolves to; returns the one to connect to, so the
 * connection goes to the address that was checked (a second resolution could answer differently: DNS
 * rebinding). Throws UnsafeAddressError when the host does not resolve or any address is refused. What runs
 * before every delivery attempt.
 */
export async function resolveSafeAddress(url: URL, policy: AddressPolicy): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostOf(url);
  const literal = checkedLiteral(host, policy);
  if (literal) return literal;
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await policy.resolveHost(host);
  } catch {
    throw refusedName(host);
  }
  if (addresses.length === 0 || addresses.some(({ address }) => refusalOf(address, policy.allowPrivateNetworks))) throw refusedName(host);
  // IPv4 first, like a resolver's ipv4first order: a receiver listening on 127.0.0.1 alone, with localhost
  // resolving to ::1 as well, is reached.
  const chosen = addresses.find(({ family }) => family === 4) ?? addresses[0];
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

/** How long a create or update waits for its url's host to resolve before taking it as not resolving (now). */
export const URL_CHECK_LOOKUP_MS = 3_000;

/**
 * The check of a url on create and update (DECISIONS §9.2): refused when its host is, or resolves to, a refused
 * address. A name that does not resolve (yet, or from this server's network), or not within
 * URL_CHECK_LOOKUP_MS, is none of those and is accepted: every delivery attempt resolves it again and fails
 * while it does not resolve, or resolves to a refused address.
 */
export async function assertAllowedHost(url: URL, policy: AddressPolicy): Promise<void> {
  const host = hostOf(url);
  if (checkedLiteral(host, policy)) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), URL_CHECK_LOOKUP_MS);
  });
  const addresses = await Promise.race([policy.resolveHost(host).catch(() => null), gaveUp]).finally(() => clearTimeout(timer));
  if (addresses?.some(({ address }) => refusalOf(address, policy.allowPrivateNetworks))) throw refusedName(host);
}
