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
import importlib.util
import ipaddress
import random
import re
import sys
import typing as t


def normalise_fqdn(value: str) -> str:
    """DNS names compare case-insensitively and with or without the root's trailing dot."""
    return (value[:-1] if value.endswith(".") else value).lower()


# Modules report a missing dnspython with missing_required_lib(); importing this file must not fail. dnspython is
# imported on first use (_dns): validating and planning use this file's names and checks, never a resolver, and
# importing dnspython cost validate.yml 40 ms (issue 25 item 4).
HAS_DNSPYTHON = importlib.util.find_spec("dns") is not None
DNSPYTHON_IMPORT_ERROR: t.Optional[BaseException] = (
    None if HAS_DNSPYTHON else ImportError("No module named 'dns' (dnspython)"))
if t.TYPE_CHECKING:  # pragma: no cover
    import dns.resolver


def _dns() -> t.Any:
    """The dnspython package with the modules this file uses imported."""
    import dns.exception  # pylint: disable=redefined-outer-name
    import dns.name
    import dns.rcode
    import dns.rdatatype
    import dns.resolver
    return dns


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
# The record itself breaks RFC 2782 or the deployment's bounds (SrvLimits): the whole record is refused.
BAD_TARGET_NAME = "bad_target_name"      # a target that is not an RFC 1123 host name
TARGET_ALIAS = "target_alias"            # a target that is a CNAME (RFC 2782: aliases are forbidden)
PORT_ZERO = "port_zero"                  # a target on port 0
UNEXPECTED_PORT = "unexpected_port"      # a port the deployment does not expect (SrvLimits.ports)
TOO_MANY_TARGETS = "too_many_targets"    # more targets than SrvLimits.max_targets
ERROR_KINDS = (NXDOMAIN, NO_ANSWER, TIMEOUT, SERVFAIL, REFUSED, NO_SERVICE, TARGET_UNRESOLVED, NO_NAMESERVERS,
               BAD_NAME, BAD_TARGET_NAME, TARGET_ALIAS, PORT_ZERO, UNEXPECTED_PORT, TOO_MANY_TARGETS)
RECORD_KINDS = (NO_SERVICE, BAD_TARGET_NAME, TARGET_ALIAS, PORT_ZERO, UNEXPECTED_PORT, TOO_MANY_TARGETS)

DEFAULT_MAX_TARGETS = 16
# The SIP port a deployment expects its SRV targets on, per transport (R-09: 5061 for TLS).
DEFAULT_PORTS = {"tls": (5061,), "tcp": (5060,), "udp": (5060,)}
# \Z, not $: "$" also matches before a trailing newline, which would then reach dispatcher.list.
_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z")


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
        dns = _dns()  # pylint: disable=redefined-outer-name
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


@dataclasses.dataclass(frozen=True)
class SrvLimits:
    """What an SRV record may contain: at most ``max_targets`` targets, each on one of ``ports``
    (``None``: any port but 0). ``limits_for`` gives a deployment's (inventory ``srv_limits``)."""

    max_targets: int = DEFAULT_MAX_TARGETS
    ports: t.Optional[t.Tuple[int, ...]] = None

    def as_dict(self) -> dict[str, t.Any]:
        return {"max_targets": self.max_targets, "ports": None if self.ports is None else list(self.ports)}


def limits_for(transport: t.Any, raw: t.Optional[t.Mapping[str, t.Any]] = None) -> SrvLimits:
    """The bounds of a deployment's SRV records: ``raw`` (inventory ``srv_limits``, or the plan's) over
    the defaults of its transport (16 targets, port 5061 for TLS, 5060 for TCP/UDP)."""
    raw = raw or {}
    ports = raw.get("ports")
    if ports is None:
        ports = DEFAULT_PORTS.get(str(transport), DEFAULT_PORTS["tls"])
    max_targets = raw.get("max_targets")
    if max_targets is None:
        max_targets = DEFAULT_MAX_TARGETS
    if not isinstance(ports, (list, tuple)) or not ports or not all(_is_int(p) and 0 < p < 65536 for p in ports):
        raise ValueError("srv_limits.ports must be a non-empty list of ports 1-65535, not %r" % (ports,))
    if not _is_int(max_targets) or max_targets < 1:
        raise ValueError("srv_limits.max_targets must be a positive integer, not %r" % (max_targets,))
    return SrvLimits(max_targets=max_targets, ports=tuple(sorted(set(ports))))


def _is_int(value: t.Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def printable_name(value: t.Union[str, bytes, t.Sequence[bytes]]) -> str:
    """A DNS name as safe text for a message: printable ASCII as is (no backslash), anything else as
    ``<U+XXXX>`` (raw bytes that are not UTF-8 as ``<0xNN>``), labels joined by '.'."""
    labels: list[t.Union[str, bytes]] = [value] if isinstance(value, (str, bytes)) else list(value)
    out = []
    for label in labels:
        if isinstance(label, bytes):
            try:
                label = label.decode("utf-8")
            except UnicodeDecodeError:
                out.append("".join(chr(b) if 0x21 <= b < 0x7f and b != 0x5c else "<0x%02X>" % b for b in label))
                continue
        out.append("".join(ch if 0x21 <= ord(ch) < 0x7f and ch != "\\" else "<U+%04X>" % ord(ch) for ch in label))
    return ".".join(out)


def host_name_problem(labels: t.Sequence[bytes]) -> t.Optional[str]:
    """Why ``labels`` (a DNS name's labels, root label excluded) is not an RFC 1123 host name, or None."""
    if not labels:
        return "it is the root name"
    if sum(len(label) + 1 for label in labels) > 254:
        return "it is longer than 253 characters"
    for label in labels:
        try:
            text = label.decode("ascii").lower()
        except UnicodeDecodeError:
            return "label %r has non-ASCII bytes" % printable_name([label])
        if not _LABEL.match(text):
            return ("label '%s' is not 1-63 letters, digits and inner hyphens" % printable_name([label]))
    return None


def lookup(resolver: "dns.resolver.Resolver", name: str, rdtype: str, where: str) -> "dns.resolver.Answer":
    """One query; every failure becomes a DnsLookupError with a distinct kind."""
    dns = _dns()  # pylint: disable=redefined-outer-name
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


def _target_addresses(resolver: "dns.resolver.Resolver", target: str, where: str, record: str) -> tuple[str, ...]:
    """IPv4 addresses of one SRV target; empty when the name has none (ACG is IPv4 only, R-07).

    A target that is an alias (CNAME) raises ``target_alias``: RFC 2782 forbids it."""
    try:
        answer = lookup(resolver, target, "A", where)
    except DnsLookupError as exc:
        if exc.kind in (NXDOMAIN, NO_ANSWER):
            return ()
        raise
    if normalise_fqdn(answer.canonical_name.to_text()) != normalise_fqdn(target):
        raise DnsLookupError(TARGET_ALIAS, record, "SRV", where,
                             "target %s is an alias (CNAME to %s); RFC 2782 requires the target's own A record"
                             % (target, printable_name(list(answer.canonical_name.labels[:-1]))))
    return tuple(sorted({rdata.address for rdata in answer}, key=ipaddress.IPv4Address))


def resolve_srv(name: str, settings: ResolverSettings, limits: t.Optional[SrvLimits] = None) -> SrvAnswer:
    """Resolve an SRV record and each target's A records.

    Raises DnsLookupError: the SRV lookup failed (its own kind); the record breaks RFC 2782 or
    ``limits`` (one of ``RECORD_KINDS``: a "." target, a target that is not a host name, on port 0
    or on a port ``limits.ports`` does not list, more than ``limits.max_targets`` targets, a target
    that is a CNAME), checked before any target is looked up; or no target has an IPv4 address
    (``target_unresolved``). A target without addresses next to usable ones is kept with
    ``addresses=()`` so the audit can name it.
    """
    limits = limits or SrvLimits()
    name = normalise_fqdn(name)
    resolver = settings.resolver()
    where = settings.describe()
    answer = lookup(resolver, name, "SRV", where)
    rrset = answer.rrset
    if rrset is None:  # resolve() raises NoAnswer first; kept so an empty answer can never pass
        raise DnsLookupError(NO_ANSWER, name, "SRV", where, "empty answer")
    records = check_record(name, where, [(int(r.priority), int(r.weight), int(r.port), r.target) for r in rrset],
                           limits)
    targets = []
    for priority, weight, port, target in sorted(records):
        targets.append(SrvTarget(priority, weight, port, target, _target_addresses(resolver, target, where, name)))
    if not any(tgt.addresses for tgt in targets):
        raise DnsLookupError(TARGET_UNRESOLVED, name, "SRV", where,
                             "no target has an IPv4 address: %s" % ", ".join(tgt.target for tgt in targets))
    ttl = int(rrset.ttl)
    chaining = getattr(answer, "chaining_result", None)
    if chaining is not None:  # a CNAME on the way expires the answer as early as the SRV RRset
        ttl = min(ttl, int(chaining.minimum_ttl))
    return SrvAnswer(name=name, ttl=ttl, targets=tuple(targets))


def check_record(name: str, where: str, records: t.Sequence[tuple[int, int, int, t.Any]],
                 limits: SrvLimits) -> list[tuple[int, int, int, str]]:
    """RFC 2782 and ``limits`` on (priority, weight, port, target) rows; targets are ``dns.name.Name``
    (a fresh answer) or text (a saved or passed-in answer). Returns the rows with normalised target
    names; raises DnsLookupError (one of ``RECORD_KINDS``) naming the first offending target."""
    def fail(kind: str, detail: str) -> t.NoReturn:
        raise DnsLookupError(kind, name, "SRV", where, detail)

    rows = []
    for priority, weight, port, target in records:
        labels = _labels(target)
        rows.append((priority, weight, port, labels))
    # RFC 2782: a Target of "." means the service is decidedly not available at this domain, and
    # then it is the only record.
    if any(not labels for _p, _w, _port, labels in rows):
        if len(rows) == 1:
            fail(NO_SERVICE, "the record's only target is '.' (RFC 2782: service not available)")
        fail(NO_SERVICE, "a target is '.' (RFC 2782: service not available) next to %d other(s); "
                         "expected either '.' alone or host names only" % (len(rows) - 1))
    if len(rows) > limits.max_targets:
        fail(TOO_MANY_TARGETS, "%d targets, more than the %d allowed (srv_limits.max_targets)"
             % (len(rows), limits.max_targets))
    checked = []
    for priority, weight, port, labels in rows:
        shown = printable_name(labels)
        problem = host_name_problem(labels)
        if problem:
            fail(BAD_TARGET_NAME, "target '%s' is not an RFC 1123 host name: %s" % (shown, problem))
        if port == 0:
            fail(PORT_ZERO, "target %s is on port 0; expected a SIP port (%s)"
                 % (shown, ", ".join(str(p) for p in limits.ports or (5061,))))
        if limits.ports is not None and port not in limits.ports:
            fail(UNEXPECTED_PORT, "target %s is on port %d; expected %s (srv_limits.ports)"
                 % (shown, port, " or ".join(str(p) for p in limits.ports)))
        checked.append((priority, weight, port, b".".join(labels).decode("ascii").lower()))
    return checked


def _labels(target: t.Any) -> list[bytes]:
    """The labels of a target name without the root label (empty: the root '.')."""
    names = sys.modules.get("dns.name")  # a dns.name.Name comes only from a lookup, which imported it
    if names is not None and isinstance(target, names.Name):
        labels = list(target.labels)
    else:  # text from a plan or saved state: only plain names can come back valid from here
        text = str(target)
        text = text[:-1] if text.endswith(".") else text
        labels = [label.encode("utf-8", "surrogateescape") for label in text.split(".")] if text else []
    if labels and labels[-1] == b"":
        labels = labels[:-1]
    return labels


def check_answer(answer: t.Mapping[str, t.Any], limits: SrvLimits) -> None:
    """``check_record`` on an ``SrvAnswer.as_dict()`` passed in from elsewhere (the plan's ``resolved``)."""
    try:
        records = [(int(x["priority"]), int(x["weight"]), int(x["port"]), x["target"]) for x in answer["targets"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise DnsLookupError(BAD_NAME, str(answer.get("name")), "SRV", "the given answer",
                             "not an SRV answer (%s: %s)" % (type(exc).__name__, exc))
    check_record(str(answer.get("name")), "the given answer", records, limits)


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
