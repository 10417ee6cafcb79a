# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the SBC's own certificate host check would make of a peer certificate (issue 13, item 4).

Kamailio exposes only the *first* DNS subjectAltName of a peer certificate, so the SBC's host check
(``route(COMMSGW_TLS_PEER_OK)``, docs/kamailio-tls.md) compares the expected regional hostname
with that first SAN or with the subject CN. RFC 6125 (6.4.4) says the CN is not used when DNS SANs
exist. The probe sees the whole certificate, so it can say at onboarding what the SBC would only
show at the first call: a certificate whose first DNS SAN is not the regional hostname.
"""

from __future__ import annotations

import typing as t

TLS_SBC_HOST_CHECK = "tls_sbc_host_check"  # PeerResult.failure: the SBC's host check would refuse or rely on the CN

ADVICE = ("the SBC (Kamailio) sees only a certificate's first DNS subjectAltName and its CN "
          "(docs/kamailio-tls.md); ask ACG (Microsoft support) for a certificate whose first DNS "
          "subjectAltName is the regional hostname")


def name_matches(pattern: str, hostname: str) -> bool:
    """RFC 6125 matching: exact, or one left-most wildcard label (what the SBC's check does too)."""
    pattern, hostname = pattern.lower().rstrip("."), hostname.lower().rstrip(".")
    if pattern == hostname:
        return True
    if pattern.startswith("*.") and "." in hostname:
        return hostname.split(".", 1)[1] == pattern[2:]
    return False


def subject_cn(subject: t.Mapping[str, str]) -> t.Optional[str]:
    return subject.get("commonName")


def sbc_host_check(san: t.Sequence[str], cn: t.Optional[str], expected: str) -> t.Optional[str]:
    """Why the SBC's host check disagrees with RFC 6125 for this certificate, or None when it does not.

    ``san``: the certificate's DNS subjectAltNames in order; ``cn``: its subject CN. Only judged when
    DNS SANs exist (without them both the SBC and RFC 6125 use the CN).
    """
    if not san or name_matches(san[0], expected):
        return None
    later = [name for name in san[1:] if name_matches(name, expected)]
    in_cn = cn is not None and name_matches(cn, expected)
    if later and not in_cn:
        return ("the SBC would refuse this peer (total outage at the first call): %s is DNS subjectAltName "
                "#%d, not the first (%s); %s" % (expected, san.index(later[0]) + 1, san[0], ADVICE))
    if later:
        return ("the SBC accepts this peer only through the subject CN %s: %s is DNS subjectAltName #%d, not the "
                "first (%s), and RFC 6125 does not use the CN when DNS subjectAltNames exist; %s"
                % (cn, expected, san.index(later[0]) + 1, san[0], ADVICE))
    if in_cn:
        return ("%s is only the subject CN while the certificate has DNS subjectAltNames (%s): RFC 6125 does not "
                "use the CN then, so the certificate does not name the regional hostname (the SBC's check would "
                "still accept it through the CN); %s" % (expected, ", ".join(san[:5]), ADVICE))
    return None
