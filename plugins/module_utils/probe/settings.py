# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's vocabulary: settings, thresholds, one peer's target and result, failure classes, verdicts.

Plain data only; every other probe module imports it (and nothing here imports them back).
"""

from __future__ import annotations

import dataclasses
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.probe import limits as lim
from ansible_collections.commsgw.routing.plugins.module_utils.probe.tls import (  # the TLS failure classes live there
    TLS_CLIENT_REJECTED, TLS_EXPIRED, TLS_HANDSHAKE, TLS_HOSTNAME_MISMATCH, TLS_PROTOCOL, TLS_SBC_HOST_CHECK,
    TLS_UNKNOWN_CA, TLS_VERIFY_FAILURES)
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import ResolverSettings

__all__ = ["TLS_CLIENT_REJECTED", "TLS_EXPIRED", "TLS_HANDSHAKE", "TLS_HOSTNAME_MISMATCH", "TLS_PROTOCOL",
           "TLS_SBC_HOST_CHECK", "TLS_UNKNOWN_CA", "TLS_VERIFY_FAILURES", "DNS", "CONNECT_REFUSED", "CONNECT_TIMEOUT",
           "CONNECT_ERROR", "NO_REPLY", "MALFORMED_REPLY", "WRONG_TRANSACTION", "NON_2XX", "TRANSPORT_NOT_ALLOWED",
           "OUT_OF_RANGE", "MCP_UDP_UNCHECKED", "FAILURE_CLASSES", "PASS", "WARN", "FAIL", "worse", "Thresholds",
           "ProbeSettings", "PeerTarget", "PeerResult", "result_for", "probe_state"]

# Peer failure classes (PeerResult.failure); the TLS ones come from probe_tls.
DNS = "dns"
CONNECT_REFUSED = "connect_refused"
CONNECT_TIMEOUT = "connect_timeout"
CONNECT_ERROR = "connect_error"            # other socket errors (unreachable network, no route)
NO_REPLY = "no_reply"
MALFORMED_REPLY = "malformed_reply"
WRONG_TRANSACTION = "wrong_transaction"    # replies came, none for our Call-ID/branch/CSeq
NON_2XX = "non_2xx"
TRANSPORT_NOT_ALLOWED = "transport_not_allowed"
OUT_OF_RANGE = lim.OUT_OF_RANGE            # outside every /28 of the record: never contacted
MCP_UDP_UNCHECKED = "not contacted: over UDP only a SIP request could test MCP, and MCP is never sent OPTIONS"
FAILURE_CLASSES = (DNS, CONNECT_REFUSED, CONNECT_TIMEOUT, CONNECT_ERROR, TLS_UNKNOWN_CA, TLS_HOSTNAME_MISMATCH,
                   TLS_EXPIRED, TLS_PROTOCOL, TLS_CLIENT_REJECTED, TLS_HANDSHAKE, NO_REPLY, MALFORMED_REPLY,
                   WRONG_TRANSACTION, NON_2XX, TRANSPORT_NOT_ALLOWED, OUT_OF_RANGE, TLS_SBC_HOST_CHECK)

PASS, WARN, FAIL = "pass", "warn", "fail"
_RANK = {PASS: 0, WARN: 1, FAIL: 2}


def worse(a: str, b: str) -> str:
    """The worse of two verdicts."""
    return a if _RANK[a] >= _RANK[b] else b


# ----------------------------------------------------------------------------------------------------------
# Settings


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """When the probe's verdicts turn to warn or fail (the module exposes each one)."""

    min_healthy_peers: int = 1            # per region (trunk group): fewer -> the region fails
    max_rtt_ms: t.Optional[float] = None  # a healthy peer slower than this -> warn
    cert_expiry_warn_days: int = 30       # a peer certificate expiring sooner -> warn
    fail_on_drift: bool = True
    fail_on_state_mismatch: bool = False  # SBC state vs probe: a timing artefact as often as a fault
    fail_on_out_of_range: bool = True
    fail_on_tls_verify: bool = True
    fail_on_provisioning_ttl: bool = True
    require_mcp_reachable: bool = True    # an MCP record none of whose targets is reachable fails


@dataclasses.dataclass(frozen=True)
class ProbeSettings:
    timeout_s: float = 3.0                # one bound per peer: connect + handshake + reply
    resolver: ResolverSettings = ResolverSettings()
    client_cert: t.Optional[str] = None
    client_key: t.Optional[str] = None
    ca_bundle: t.Optional[str] = None     # None: the system trust store (DigiCert Global Root G2, R-24)
    source_address: t.Optional[str] = None  # the SBC's ACG-side address (ACG only accepts its declared ranges)
    allowed_transports: tuple[str, ...] = ("tls",)  # UDP/TCP only where the deployment allows it (labs)
    concurrency: int = 64                 # 1 probes one peer after another (the benchmark's baseline)
    user_agent: str = "commsgw-probe"
    check_provisioning_ttl: bool = True
    thresholds: Thresholds = Thresholds()


# ----------------------------------------------------------------------------------------------------------
# Targets and results


@dataclasses.dataclass(frozen=True)
class PeerTarget:
    kind: str            # "sip" (OPTIONS) or "mcp" (reachability + certificate only)
    region: str
    srv_name: str
    hostname: str        # regional hostname: SNI and certificate name (R-24)
    verify_hostname: str
    target: str          # SRV target name
    address: t.Optional[str]
    port: int
    priority: int
    weight: int
    transport: str
    in_range: bool
    ranges: tuple[str, ...] = ()  # the /28s the address must be in (named when it is not)


@dataclasses.dataclass
class PeerResult:
    kind: str
    region: str
    srv_name: str
    target: str
    address: t.Optional[str]
    port: int
    priority: int
    weight: int
    transport: str
    in_range: bool
    healthy: bool = False
    failure: t.Optional[str] = None
    detail: str = ""
    code: t.Optional[int] = None
    reason: t.Optional[str] = None
    server: t.Optional[str] = None
    rtt_ms: t.Optional[float] = None
    connect_ms: t.Optional[float] = None
    handshake_ms: t.Optional[float] = None
    elapsed_ms: float = 0.0
    tls: t.Optional[dict[str, t.Any]] = None
    duplicates: int = 0
    stray_replies: list[str] = dataclasses.field(default_factory=list)  # the first lim.MAX_STRAY_KEPT
    stray_count: int = 0                                                # all of them
    verdict: str = PASS
    reasons: list[str] = dataclasses.field(default_factory=list)

    @property
    def label(self) -> str:
        where = self.address or "unresolved"
        return "%s %s:%d (%s)" % (self.transport, where, self.port, self.target)

    def as_dict(self) -> dict[str, t.Any]:
        data = dataclasses.asdict(self)
        data["label"] = self.label
        return data


def result_for(target: PeerTarget) -> PeerResult:
    return PeerResult(kind=target.kind, region=target.region, srv_name=target.srv_name, target=target.target,
                      address=target.address, port=target.port, priority=target.priority, weight=target.weight,
                      transport=target.transport, in_range=target.in_range)


def probe_state(peer: PeerResult) -> str:
    return "healthy" if peer.healthy else (peer.failure or "unhealthy")
