# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rendered route COMMSGW_TLS_MAC, run by a real Kamailio, is HMAC-SHA256 (issue 21 item 1, issue 25 item 1):
on the machine's Kamailio (5.6 on Debian 12, where TLS needs the documented override) and on 6.0 (the host's
or the cached rootfs), with keys whose padded bytes hold NULs and Call-IDs whose inner digest does too (the
route keeps binary strings in $var and concatenates them). The route is taken from a rendered kamailio.cfg
and wrapped in a minimal config that answers each OPTIONS with the MAC of its X-Name header and Call-ID."""

from __future__ import annotations

import hashlib
import random
import re
import socket
import string
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import (
    DIALOG_IPAD, DIALOG_OPAD, hmac_pads)
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import render_kamailio
from harness import rootfs
from harness.dialog_mac import dialog_mac_message, expected_dialog_mac
from harness.kamailio import KamailioProcess
from harness.tools import needs

pytestmark = [pytest.mark.integration, needs("unshare")]

ADDRESS = "127.0.0.1"  # one UDP listener on a port chosen free at start (127.0.0.x: every test's own ports)
SETTINGS: dict[str, t.Any] = {
    "acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10", "port": 5070},
    "core_next_hop": "10.0.0.20:5060", "allow_tls_on_unfixed_kamailio": True,
    "tls": {"certificate": "/etc/ssl/sbc.pem", "private_key": "/etc/ssl/sbc.key", "ca_bundle": "/etc/ssl/acg.pem"}}
# 0x36 / 0x5c key bytes make NULs in the inner / outer padded key.
KEYS = {"random": hashlib.sha256(b"test_kamailio_dialog_mac").digest(),
        "NULs in both pads": bytes([0x36, 0x5c, 0x00, 0xff] * 8)}


def _mac_route(version: str) -> str:
    from tests.unit.kamailio.test_kamailio_tls_render import _plan
    cfg = render_kamailio(_plan(), SETTINGS, version)["kamailio.cfg"]
    route = re.search(r"^route\[COMMSGW_TLS_MAC\] \{\n.*?^\}\n", cfg, re.S | re.M)
    assert route, "no route COMMSGW_TLS_MAC in the rendered kamailio.cfg"
    return route.group(0)


def _config(version: str, key: bytes, port: int, run_dir: Path) -> str:
    ipad_key, opad_key = hmac_pads(key)
    return "\n".join([
        "#!KAMAILIO",
        '#!substdef "!%s!%s!"' % (DIALOG_IPAD, ipad_key.hex()),
        '#!substdef "!%s!%s!"' % (DIALOG_OPAD, opad_key.hex()),
        "debug=2", "log_stderror=yes", "children=1", "listen=udp:%s:%d" % (ADDRESS, port),
        'loadmodule "jsonrpcs.so"', 'loadmodule "sl.so"', 'loadmodule "xlog.so"', 'loadmodule "textops.so"',
        'loadmodule "pv.so"',
        'modparam("jsonrpcs", "dgram_socket", "%s/kamailio_rpc.sock")' % run_dir,
        'modparam("jsonrpcs", "fifo_name", "%s/kamailio_rpc.fifo")' % run_dir,
        "request_route {",
        "\t$var(commsgw_tls_claim) = $hdr(X-Name);",
        "\troute(COMMSGW_TLS_MAC);",
        '\tappend_to_reply("X-Mac: $var(commsgw_tls_mac_want)\\r\\n");',
        '\tsl_send_reply("200", "OK");',
        "\texit;",
        "}",
        _mac_route(version)])


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind((ADDRESS, 0))
        return probe.getsockname()[1]


def _cases(count: int) -> t.Iterator[tuple[str, str]]:
    rng = random.Random(2125)
    word = string.ascii_letters + string.digits + "-.!%*_+`'~()<>:\\\"/[]?{}|"
    for index in range(count):
        name = rng.choice(["pstn-region1.acg.example", "a", "x" * 60, "sbc-%d.acg.example" % index, "a:b|c"])
        yield name, "".join(rng.choice(word) for _index in range(rng.randint(1, 48))) + "@%d" % index


def _ask(client: socket.socket, port: int, name: str, call_id: str, index: int) -> str:
    request = ("OPTIONS sip:x@%s:%d SIP/2.0\r\nVia: SIP/2.0/UDP %s:%d;branch=z9hG4bK-mac-%d\r\n"
               "From: <sip:a@example.test>;tag=1\r\nTo: <sip:x@example.test>\r\nCall-ID: %s\r\nCSeq: 1 OPTIONS\r\n"
               "X-Name: %s\r\nMax-Forwards: 5\r\nContent-Length: 0\r\n\r\n"
               % (ADDRESS, port, ADDRESS, client.getsockname()[1], index, call_id, name))
    client.sendto(request.encode(), (ADDRESS, port))
    reply = client.recv(65535).decode()
    mac = re.search(r"^X-Mac: (\S+)\r$", reply, re.M)
    assert mac, reply
    return mac.group(1)


def _runtime(which: str) -> rootfs.KamailioRuntime:
    if which == "machine":
        return rootfs.KamailioRuntime(version=rootfs.host_kamailio_version() or "", rootfs=None)
    try:
        return rootfs.kamailio6_runtime()
    except rootfs.RootfsUnavailable as exc:
        pytest.skip("no Kamailio 6.0: %s" % exc)


@pytest.mark.parametrize("which", ["machine", "6.0"])
@pytest.mark.parametrize("key_name", sorted(KEYS))
def test_the_rendered_mac_route_is_hmac_sha256_on_real_kamailio(tmp_path: Path, which: str, key_name: str) -> None:
    runtime = _runtime(which)
    if not runtime.version:
        pytest.skip("kamailio not installed")
    key, port = KEYS[key_name], _free_udp_port()
    run_dir = tmp_path / "run"
    cfg = tmp_path / "cfg" / "kamailio.cfg"
    cfg.parent.mkdir()
    cfg.write_text(_config(runtime.version, key, port, run_dir))
    inner_nul = 0
    with KamailioProcess(cfg, tmp_path / "work", run_dir, rootfs=runtime.rootfs) as kamailio, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        client.bind((ADDRESS, 0))
        client.settimeout(3)
        for index, (name, call_id) in enumerate(_cases(120)):
            message = dialog_mac_message(name, call_id).encode()
            inner_nul += b"\0" in hashlib.sha256(hmac_pads(key)[0] + message).digest()
            want = expected_dialog_mac(key, name, call_id)
            got = _ask(client, port, name, call_id, index)
            assert got == want, (runtime.version, name, call_id, kamailio.log_tail(10))
    assert inner_nul > 0  # some inner digests held a NUL byte: binary strings survived the route
