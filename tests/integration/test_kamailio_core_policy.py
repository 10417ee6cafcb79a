# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Core-side policy of the rendered Kamailio, black-box (issue 13 items 6 and 9).

Real software only (Knot DNS, the machine's Kamailio, SIPp), the conformance lab (harness.kamailio.AcgLab)
with ``commsgw_sbc.core_allowed_sources`` = the core /24 (the harness default) and
``number_normalisation`` = {country_code 49, national_prefix 0, international_prefix 00}:

* source ACL: a caller outside ``core_allowed_sources`` is refused (403) for initial requests, OPTIONS,
  a forged in-dialog request and in-dialog requests (re-INVITE, BYE) of a live dialog alike, and nothing
  reaches ACG; a listed caller is routed; the group is reloadable (``permissions.addressReload``).
* R-26: a non-E.164 Request-URI user is refused with 484 and no ACG peer sees it; E.164 passes as is;
  national and international prefixes are rewritten to E.164 before the request leaves.
* R-25 after the rewrite (issue 21 item 10): no emergency dial string reaches ACG in any dialling form
  the rules accept (112, +112, 00112 -> +112, 0112 -> +49112, +49112, 0049112).
"""

from __future__ import annotations

import socket
import time
import typing as t
import uuid
from pathlib import Path

import pytest

from harness.tools import needs
from harness.kamailio import AcgLab, BlockLease, KamailioError, Topology
from harness.sipp import CallResult, PeerGroup as Peers, SippCaller, emergency_forms, udp_invite, udp_options

pytestmark = [
    pytest.mark.integration,
    needs("kamailio", "sipp", "knotd", "unshare"),
]

TOPO = Topology(block=0)
R1: list[str] = []
NORMALISATION = {"country_code": "49", "national_prefix": "0", "international_prefix": "00"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[AcgLab]:
    global TOPO
    lease = BlockLease()
    TOPO = Topology(block=lease.block)
    R1[:] = [TOPO.region1(1), TOPO.region1(2)]
    lab = AcgLab(tmp_path_factory.mktemp("core-policy-lab"), TOPO, settings={"number_normalisation": NORMALISATION})
    try:
        lab.start()
        yield lab
    finally:
        lab.stop()
        lease.close()


def _peers(tmp_path: Path) -> Peers:
    return Peers(tmp_path, {address: 200 for address in R1 + [TOPO.region1(3), TOPO.region2(1), TOPO.region2(2)]})


def _settle(lab: AcgLab) -> None:
    lab.reset_peers()
    for address in R1:
        assert lab.wait_peer_state(address, True, 5.0) is not None, "%s never became active" % address


def _call(tmp_path: Path, name: str, count: int = 1, source: t.Optional[str] = None,
          **kwargs: t.Any) -> tuple[SippCaller, CallResult]:
    caller = SippCaller(name, tmp_path / name, source or TOPO.core_caller, "%s:5060" % TOPO.sbc_core, hold_ms=0,
                        **kwargs)
    return caller, caller.run(count, 10.0, timeout_s=30)


def _acg_request_uris(peers: Peers) -> list[str]:
    return [m.first_line.split()[1] for peer in peers.peers.values() for m in peer.received_requests("INVITE")]


def _raw(source: str, text: str, timeout_s: float = 2.0) -> t.Optional[str]:
    """Send one raw SIP request over UDP from ``source`` to the SBC's core socket: the status line back."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((source, 0))
        sock.settimeout(timeout_s)
        port = sock.getsockname()[1]
        sock.sendto(text.replace("@SRC@", "%s:%d" % (source, port)).replace("\n", "\r\n").encode(),
                    (TOPO.sbc_core, 5060))
        return sock.recv(65535).decode(errors="replace").splitlines()[0]
    except socket.timeout:
        return None
    finally:
        sock.close()


def _forged_bye(target: str) -> str:
    """An in-dialog BYE of no dialog, Route-ing through the SBC to an ACG peer (toll fraud in-dialog)."""
    cid = uuid.uuid4().hex
    return ("BYE sip:+4930123456@%s:5060 SIP/2.0\nVia: SIP/2.0/UDP @SRC@;branch=z9hG4bK%s\n"
            "Route: <sip:%s:5060;lr>\nMax-Forwards: 70\nFrom: <sip:caller@@SRC@>;tag=f%s\n"
            "To: <sip:+4930123456@%s>;tag=t%s\nCall-ID: %s\nCSeq: 2 BYE\nContent-Length: 0\n\n"
            % (target, cid, TOPO.sbc_core, cid[:6], target, cid[:6], cid))


# ---- item 6: core-side source ACL ----------------------------------------------------------------
def test_unlisted_core_source_is_refused_and_listed_one_routed(lab: AcgLab, tmp_path: Path) -> None:
    outsider = TOPO.outsider()
    with _peers(tmp_path) as peers:
        _settle(lab)
        dummy, refused = _call(tmp_path, "outsider", 3, source=outsider, expect=403)
        assert _raw(outsider, _forged_bye(R1[0])) == "SIP/2.0 403 Forbidden"
        dummy, routed = _call(tmp_path, "listed", 2)
        uris = _acg_request_uris(peers)
        byes = sum(len(peer.received_requests("BYE")) for peer in peers.peers.values())
    assert refused.codes() == {403: 3}, refused.codes()
    assert routed.codes() == {200: 2}, routed.codes()
    assert routed.successful == 2
    # Only the listed caller's calls reached ACG; its BYEs (2) went through, the forged one did not.
    assert len(set(uris)) == 1 and len(uris) >= 2, uris
    assert byes == 2, byes
    assert udp_options(outsider, TOPO.sbc_core) == "SIP/2.0 403 Forbidden"
    assert udp_options(TOPO.core_caller, TOPO.sbc_core) == "SIP/2.0 200 OK"
    assert "not in commsgw_sbc.core_allowed_sources refused" in lab.kamailio.log_text()  # type: ignore[union-attr]


class _RawUac:
    """Just enough of a SIP UA on a raw UDP socket to hold one real dialog through the SBC's core socket."""

    def __init__(self, source: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((source, 0))
        self.sock.settimeout(5.0)
        self.address = "%s:%d" % (source, self.sock.getsockname()[1])

    def request(self, text: str) -> t.Optional[str]:
        """Send ``text`` (@SRC@ and @BRANCH@ filled in) to core_listen; the final answer, or None."""
        text = text.replace("@SRC@", self.address).replace("@BRANCH@", "z9hG4bK" + uuid.uuid4().hex)
        self.sock.sendto(text.replace("\n", "\r\n").encode(), (TOPO.sbc_core, 5060))
        if text.startswith("ACK "):
            return None
        try:
            while True:
                answer = self.sock.recv(65535).decode(errors="replace").replace("\r\n", "\n")
                if not answer.startswith("SIP/2.0 1"):
                    return answer
        except socket.timeout:
            return None

    def close(self) -> None:
        self.sock.close()


def _headers(message: str, name: str) -> list[str]:
    """Every value of header ``name`` (comma-separated values split)."""
    values = [line.split(":", 1)[1].strip() for line in message.split("\n\n", 1)[0].splitlines()[1:]
              if line.split(":", 1)[0].strip().lower() == name.lower()]
    return [value.strip() for line in values for value in line.split(",")]


def test_an_unlisted_source_cannot_send_into_a_live_dialog(lab: AcgLab, tmp_path: Path) -> None:
    """Issue 21 item 5: a real dialog set up by a listed caller; the outsider who learnt its Call-ID, tags
    and route set sends a re-INVITE and a BYE into it from outside core_allowed_sources: both 403, neither
    reaches ACG. The caller's own BYE still ends the call (the dialog was live, the requests well formed)."""
    caller, outsider = _RawUac(TOPO.core_caller), _RawUac(TOPO.outsider(11))
    cid, tag = uuid.uuid4().hex, uuid.uuid4().hex[:8]
    target = "+4930123456@%s:5060" % TOPO.sbc_core
    try:
        with _peers(tmp_path) as peers:
            _settle(lab)
            ok = caller.request("INVITE sip:%s SIP/2.0\nVia: SIP/2.0/UDP @SRC@;branch=@BRANCH@\nMax-Forwards: 70\n"
                                "From: <sip:caller@@SRC@>;tag=%s\nTo: <sip:%s>\nCall-ID: %s\nCSeq: 1 INVITE\n"
                                "Contact: <sip:caller@@SRC@>\nContent-Length: 0\n\n" % (target, tag, target, cid))
            assert ok is not None and ok.startswith("SIP/2.0 200 OK"), ok
            remote = _headers(ok, "Contact")[0].strip("<>")
            routes = "".join("Route: %s\n" % uri for uri in reversed(_headers(ok, "Record-Route")))
            assert routes, ok
            dialog = ("From: <sip:caller@%s>;tag=%s\nTo: %s\nCall-ID: %s\n%sMax-Forwards: 70\nContent-Length: 0\n\n"
                      % (caller.address, tag, _headers(ok, "To")[0], cid, routes))
            caller.request("ACK %s SIP/2.0\nVia: SIP/2.0/UDP @SRC@;branch=@BRANCH@\nCSeq: 1 ACK\n%s"
                           % (remote, dialog))
            reinvite = outsider.request("INVITE %s SIP/2.0\nVia: SIP/2.0/UDP @SRC@;branch=@BRANCH@\n"
                                        "CSeq: 2 INVITE\nContact: <sip:caller@@SRC@>\n%s" % (remote, dialog))
            bye = outsider.request("BYE %s SIP/2.0\nVia: SIP/2.0/UDP @SRC@;branch=@BRANCH@\nCSeq: 3 BYE\n%s"
                                   % (remote, dialog))
            own_bye = caller.request("BYE %s SIP/2.0\nVia: SIP/2.0/UDP @SRC@;branch=@BRANCH@\nCSeq: 4 BYE\n%s"
                                     % (remote, dialog))
            time.sleep(0.5)
            invites = [m for p in peers.peers.values() for m in p.received_requests("INVITE") if m.call_id == cid]
            byes = [m for p in peers.peers.values() for m in p.received_requests("BYE") if m.call_id == cid]
    finally:
        caller.close()
        outsider.close()
    assert reinvite is not None and reinvite.startswith("SIP/2.0 403 Forbidden"), reinvite
    assert bye is not None and bye.startswith("SIP/2.0 403 Forbidden"), bye
    assert own_bye is not None and own_bye.startswith("SIP/2.0 200 OK"), own_bye
    # ACG saw the caller's INVITE and the caller's BYE only (CSeq 4), nothing of the outsider.
    assert len(invites) == 1 and [m.header("CSeq") for m in byes] == ["4 BYE"], (invites, byes)


def _address_reload(lab: AcgLab) -> None:
    """permissions.addressReload; the module refuses reloads closer than reload_delta (5 s) to each other."""
    assert lab.kamailio is not None
    deadline = time.monotonic() + 8.0
    while True:
        try:
            lab.kamailio.rpc("permissions.addressReload")
            return
        except KamailioError as exc:
            if "ongoing reload" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_core_acl_is_reloadable(lab: AcgLab) -> None:
    """Group 2 of address.list, reloaded at run time like the ACG /28s: no restart to add a source."""
    outsider = TOPO.outsider(10)
    path = lab.cfg_dir / "address.list"
    original = path.read_text()
    assert lab.kamailio is not None
    try:
        assert udp_options(outsider, TOPO.sbc_core) == "SIP/2.0 403 Forbidden"
        path.write_text(original + "2 %s 32 0 side=core\n" % outsider)
        _address_reload(lab)
        assert udp_options(outsider, TOPO.sbc_core) == "SIP/2.0 200 OK"
    finally:
        path.write_text(original)
        _address_reload(lab)
    assert udp_options(outsider, TOPO.sbc_core) == "SIP/2.0 403 Forbidden"


# ---- item 9: R-26, E.164 towards ACG -------------------------------------------------------------
@pytest.mark.parametrize("user", ["4930123456", "49-30-123456", "+0301234", "+1234567890123456", "000301234"])
def test_non_e164_is_refused_and_never_reaches_acg(lab: AcgLab, tmp_path: Path, user: str) -> None:
    with _peers(tmp_path) as peers:
        _settle(lab)
        caller, refused = _call(tmp_path, "non-e164", 2, user=user, expect=484)
        uris = _acg_request_uris(peers)
    assert refused.codes() == {484: 2}, refused.codes()
    assert uris == [], uris
    replies = [m.first_line for m in caller.messages("received") if m.first_line.startswith("SIP/2.0 484")]
    assert replies and replies[0] == "SIP/2.0 484 Address Incomplete (E.164 Number Required)", replies


@pytest.mark.parametrize("user,sent", [
    ("+4930123456", "+4930123456"),      # E.164: as is
    ("030123456", "+4930123456"),        # national prefix 0 -> +49
    ("0044201234567", "+44201234567"),   # international prefix 00 -> +
], ids=["e164", "national", "international"])
def test_e164_passes_and_prefixes_are_normalised(lab: AcgLab, tmp_path: Path, user: str, sent: str) -> None:
    with _peers(tmp_path) as peers:
        _settle(lab)
        dummy, result = _call(tmp_path, "e164", 2, user=user)
        uris = _acg_request_uris(peers)
    assert result.codes() == {200: 2}, result.codes()
    assert uris and {u.split("@")[0] for u in uris} == {"sip:" + sent}, uris


# ---- issue 21 item 10: R-25 in every dialling form the normalisation accepts ------------------------------
def test_no_emergency_dial_string_reaches_acg_in_any_dialling_form(lab: AcgLab, tmp_path: Path) -> None:
    """With number_normalisation, 00112 used to leave as +112 (the emergency check ran before the rewrite):
    every emergency dial string of the deployment, in every form, is now refused with the emergency reply;
    an ordinary national number still goes, normalised."""
    dials = list(lab.plan["emergency"]["dial_strings"])
    assert dials, "the lab deployment has emergency dial strings"
    with _peers(tmp_path) as peers:
        _settle(lab)
        answers = {form: udp_invite(TOPO.core_caller, TOPO.sbc_core, form)
                   for dial in dials for form in emergency_forms(dial, NORMALISATION)}
        dummy, normal = _call(tmp_path, "normal-after-sos", 1, user="030123456")
        uris = _acg_request_uris(peers)
    assert answers == {form: "SIP/2.0 403 Emergency Calls Not Routed To ACG" for form in answers}, answers
    assert normal.codes() == {200: 1}, normal.codes()
    assert [u.split("@")[0] for u in uris] == ["sip:+4930123456"], uris
