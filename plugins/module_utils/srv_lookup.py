# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One SRV lookup, the canonical order of its targets and RFC 2782 selection.

Standard library and dnspython only, so that the very same code resolves ACG's records on the
controller (``srv``, the plan) and on the SBC host (the SRV refresher, the probe), where neither
Ansible nor PyYAML may be installed. Every DNS failure raises a ``DnsLookupError`` whose ``kind``
tells NXDOMAIN, no answer, timeout and SERVFAIL apart: a lookup never "succeeds" with nothing in it.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import random
import typing as t


def normalise_fqdn(value: str) -> str:
    """DNS names compare case-insensitively and with or without the root's trailing dot."""
    return (value[:-1] if value.endswith(".") else value).lower()


# Modules report a missing dnspython with missing_required_lib(); importing this file must not fail.
try:
    import dns.exception
    import dns.rcode
    import dns.rdatatype
    import dns.resolver
    HAS_DNSPYTHON = True
    DNSPYTHON_IMPORT_ERROR: t.Optional[BaseException] = None
except ImportError as exc:  # pragma: no cover - exercised only where dnspython is absent
    HAS_DNSPYTHON = False
    DNSPYTHON_IMPORT_ERROR = exc

# DnsLookupError.kind values.
NXDOMAIN = "nxdomain"
NO_ANSWER = "no_answer"
TIMEOUT = "timeout"
SERVFAIL = "servfail"
REFUSED = "refused"
NO_SERVICE = "no_service"
TARGET_UNRESOLVED = "target_unresolved"
NO_NAMESERVERS = "no_nameservers"
BAD_NAME = "bad_name"
ERROR_KINDS = (NXDOMAIN, NO_ANSWER, TIMEOUT, SERVFAIL, REFUSED, NO_SERVICE, TARGET_UNRESOLVED, NO_NAMESERVERS,
               BAD_NAME)


class DnsLookupError(Exception):
    """A DNS lookup that gave no usable answer; ``kind`` is one of ``ERROR_KINDS``."""

    def __init__(self, kind: str, name: str, rdtype: str, nameserver: str, detail: str) -> None:
        self.kind = kind
        self.name = name
        self.rdtype = rdtype
        self.nameserver = nameserver
        self.detail = detail
        super().__init__("%s lookup of %s via %s: %s" % (rdtype, name, nameserver, detail))


@dataclasses.dataclass(frozen=True)
class SrvTarget:
    priority: int
    weight: int
    port: int
    target: str
    addresses: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, t.Any]:
        return {"priority": self.priority, "weight": self.weight, "port": self.port, "target": self.target,
                "addresses": list(self.addresses)}


@dataclasses.dataclass(frozen=True)
class SrvAnswer:
    name: str
    ttl: int
    targets: tuple[SrvTarget, ...]

    def as_dict(self) -> dict[str, t.Any]:
        """The shape ``plan.build_site_plan(resolved={name: answer})`` reads."""
        return {"name": self.name, "ttl": self.ttl, "targets": [tgt.as_dict() for tgt in self.targets]}


@dataclasses.dataclass(frozen=True)
class ResolverSettings:
    """Where and how to ask. ``nameservers=None`` means the machine's /etc/resolv.conf."""

    nameservers: t.Optional[t.Sequence[str]] = None
    port: int = 53
    timeout_s: float = 2.0

    def resolver(self) -> "dns.resolver.Resolver":
        if not HAS_DNSPYTHON:
            raise RuntimeError("dnspython is required for SRV lookups: %s" % DNSPYTHON_IMPORT_ERROR)
        if self.nameservers:
            resolver = dns.resolver.Resolver(configure=False)
            resolver.nameservers = list(self.nameservers)
        else:
            resolver = dns.resolver.Resolver()
        resolver.port = self.port
        # One bound for the whole lookup: a dead nameserver must cost timeout_s, not timeout_s per retry.
        resolver.timeout = self.timeout_s
        resolver.lifetime = self.timeout_s
        # The audit wants what the network serves now, not what this process saw a moment ago.
        resolver.cache = None
        return resolver

    def describe(self) -> str:
        servers = list(self.nameservers) if self.nameservers else ["the system resolvers"]
        suffix = "" if self.port == 53 else " port %d" % self.port
        return ", ".join(servers) + suffix


def lookup(resolver: "dns.resolver.Resolver", name: str, rdtype: str, where: str) -> "dns.resolver.Answer":
    """One query; every failure becomes a DnsLookupError with a distinct kind."""
    try:
        return resolver.resolve(name, rdtype, search=False)
    except dns.resolver.NXDOMAIN:
        raise DnsLookupError(NXDOMAIN, name, rdtype, where, "the name does not exist (NXDOMAIN)")
    except dns.resolver.NoAnswer:
        raise DnsLookupError(NO_ANSWER, name, rdtype, where,
                             "the name exists but has no %s record (NOERROR, empty answer)" % rdtype)
    except dns.exception.Timeout:  # LifetimeTimeout is a subclass
        raise DnsLookupError(TIMEOUT, name, rdtype, where,
                             "no response within %.1f s" % float(resolver.lifetime or 0))
    except dns.resolver.NoNameservers as exc:
        # Each error is (server, tcp, port, exception, response); the response carries the rcode.
        rcodes = {error[4].rcode() for error in exc.kwargs.get("errors", []) if error[4] is not None}
        if dns.rcode.SERVFAIL in rcodes:
            raise DnsLookupError(SERVFAIL, name, rdtype, where, "the nameserver answered SERVFAIL")
        if dns.rcode.REFUSED in rcodes:
            raise DnsLookupError(REFUSED, name, rdtype, where, "the nameserver REFUSED the query")
        raise DnsLookupError(NO_NAMESERVERS, name, rdtype, where, "no nameserver gave an answer: %s" % exc)
    except dns.exception.DNSException as exc:  # bad names, YXDOMAIN and the like
        raise DnsLookupError(BAD_NAME, name, rdtype, where, str(exc))


def _target_addresses(resolver: "dns.resolver.Resolver", target: str, where: str) -> tuple[str, ...]:
    """IPv4 addresses of one SRV target; empty when the name has none (ACG is IPv4 only, R-07)."""
    try:
        answer = lookup(resolver, target, "A", where)
    except DnsLookupError as exc:
        if exc.kind in (NXDOMAIN, NO_ANSWER):
            return ()
        raise
    return tuple(sorted({rdata.address for rdata in answer}, key=ipaddress.IPv4Address))


def resolve_srv(name: str, settings: ResolverSettings) -> SrvAnswer:
    """Resolve an SRV record and each target's A records.

    Raises DnsLookupError: the SRV lookup failed (its own kind), the record is the RFC 2782 "service
    not available" answer (``no_service``) or no target has an IPv4 address (``target_unresolved``).
    A target without addresses next to usable ones is kept with ``addresses=()`` so the audit can
    name it.
    """
    name = normalise_fqdn(name)
    resolver = settings.resolver()
    where = settings.describe()
    answer = lookup(resolver, name, "SRV", where)
    rrset = answer.rrset
    if rrset is None:  # resolve() raises NoAnswer first; kept so an empty answer can never pass
        raise DnsLookupError(NO_ANSWER, name, "SRV", where, "empty answer")
    records = [(int(r.priority), int(r.weight), int(r.port), normalise_fqdn(r.target.to_text()) or ".")
               for r in rrset]
    # RFC 2782: a Target of "." means the service is decidedly not available at this domain.
    usable = [rec for rec in records if rec[3] != "."]
    if not usable:
        raise DnsLookupError(NO_SERVICE, name, "SRV", where,
                             "the record's only target is '.' (RFC 2782: service not available)")
    targets = []
    for priority, weight, port, target in sorted(usable):
        targets.append(SrvTarget(priority, weight, port, target, _target_addresses(resolver, target, where)))
    if not any(tgt.addresses for tgt in targets):
        raise DnsLookupError(TARGET_UNRESOLVED, name, "SRV", where,
                             "no target has an IPv4 address: %s" % ", ".join(tgt.target for tgt in targets))
    ttl = int(rrset.ttl)
    chaining = getattr(answer, "chaining_result", None)
    if chaining is not None:  # a CNAME on the way expires the answer as early as the SRV RRset
        ttl = min(ttl, int(chaining.minimum_ttl))
    return SrvAnswer(name=name, ttl=ttl, targets=tuple(targets))


def rfc2782_order(targets: t.Sequence[t.Any], rng: random.Random) -> list[t.Any]:
    """Order targets the way RFC 2782 tells a client to try them.

    Priority ascending; within one priority, repeated weighted random selection: put the weight-0
    entries first, draw a uniform integer in [0, sum of weights], take the first entry whose running
    sum reaches it. A weight-0 entry is thus taken only when the draw is 0 (or it is alone). Targets
    are SrvTarget objects or mappings with ``priority`` and ``weight``.
    """
    def field(item: t.Any, key: str) -> int:
        return int(item[key] if isinstance(item, dict) else getattr(item, key))

    # Read priority and weight once: clients call this for every call attempt.
    entries = [(field(item, "priority"), field(item, "weight"), item) for item in targets]
    ordered: list[t.Any] = []
    for priority in sorted({entry[0] for entry in entries}):
        remaining = [(weight, item) for prio, weight, item in entries if prio == priority]
        while remaining:
            # "Arrange in any order, weight 0 first": shuffle so equal-weight ties are not biased by
            # input order, then a stable sort brings the zeros to the front.
            rng.shuffle(remaining)
            remaining.sort(key=lambda entry: entry[0] != 0)
            draw = rng.randint(0, sum(entry[0] for entry in remaining))
            running = 0
            for index, (weight, item) in enumerate(remaining):
                running += weight
                if running >= draw:
                    ordered.append(remaining.pop(index)[1])
                    break
    return ordered


def canonical_targets(targets: t.Iterable[SrvTarget]) -> tuple[SrvTarget, ...]:
    """The one stable order of a record set: priority, heaviest first, then name and port.

    The plan, the rendered peer lists and the refresher all use it, so an unchanged record set
    always renders byte for byte the same (addresses are already in numeric order).
    """
    return tuple(sorted(targets, key=lambda tgt: (tgt.priority, -tgt.weight, tgt.target, tgt.port)))


def target_from_dict(raw: t.Mapping[str, t.Any]) -> SrvTarget:
    """Back from ``SrvTarget.as_dict()`` (plans, saved state), normalised like a fresh lookup."""
    return SrvTarget(int(raw["priority"]), int(raw["weight"]), int(raw["port"]), normalise_fqdn(str(raw["target"])),
                     tuple(sorted((str(a) for a in raw.get("addresses", [])), key=ipaddress.IPv4Address)))


def addresses_outside(targets: t.Iterable[SrvTarget], ranges: t.Iterable[str]) -> list[tuple[SrvTarget, str]]:
    """Every (target, address) that lies in none of ``ranges`` (R-07); unparsable ranges are skipped
    (validation reports them)."""
    networks = []
    for value in ranges:
        try:
            networks.append(ipaddress.ip_network(value, strict=False))
        except ValueError:
            continue
    return [(target, address) for target in targets for address in target.addresses
            if not any(ipaddress.ip_address(address) in network for network in networks)]
