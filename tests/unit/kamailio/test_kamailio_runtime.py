# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the RPC client looks for a configuration's jsonrpcs endpoints, preprocessor included."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (
    active_text, listen_addresses, rpc_endpoints)

# The shape of Debian's stock kamailio.cfg (5.6 and 6.0): the transport setting sits in a block
# that is off unless WITH_JSONRPC is defined, so jsonrpcs keeps its default (all transports).
STOCK = """#!KAMAILIO
#!ifdef WITH_DEBUG
#!define DBGLEVEL 3
#!else
#!define DBGLEVEL 2
#!endif
loadmodule "jsonrpcs.so"
modparam("jsonrpcs", "pretty_format", 1)
# modparam("jsonrpcs", "fifo_name", "/run/kamailio/kamailio_rpc.fifo")
#!ifdef WITH_JSONRPC
modparam("jsonrpcs", "transport", 7)
#!endif
"""


def test_stock_config_keeps_the_default_transports() -> None:
    endpoints = rpc_endpoints(STOCK, "/run/kamailio")
    assert endpoints.socket == "/run/kamailio/kamailio_rpc.sock"
    assert endpoints.fifo == "/run/kamailio/kamailio_rpc.fifo"


def test_the_same_block_counts_once_defined() -> None:
    text = "#!define WITH_JSONRPC\n" + STOCK.replace('"transport", 7', '"transport", 1')
    endpoints = rpc_endpoints(text, "/run/kamailio")
    assert (endpoints.socket, endpoints.fifo) == (None, "/run/kamailio/kamailio_rpc.fifo")


@pytest.mark.parametrize("transport, socket, fifo", [("0", True, True), ("1", False, True), ("2", True, False),
                                                     ("3", True, True), ("4", False, False)])
def test_transport_is_a_bit_mask(transport: str, socket: bool, fifo: bool) -> None:
    endpoints = rpc_endpoints('modparam("jsonrpcs", "transport", %s)\n' % transport, "/r")
    assert (endpoints.socket is not None, endpoints.fifo is not None) == (socket, fifo)


def test_nested_blocks_and_else() -> None:
    text = "\n".join(["#!define A", "#!ifdef A", "#!ifdef B", "in-b", "#!else", "not-b", "#!endif", "in-a",
                      "#!else", "not-a", "#!endif", "!!ifndef A", "bang-not-a", "!!endif", "#!undef A",
                      "#!ifdef A", "after-undef", "#!endif", "end"])
    assert active_text(text).splitlines() == ["not-b", "in-a", "end"]


def test_listen_addresses_of_inactive_blocks_are_ignored() -> None:
    text = "listen=udp:192.0.2.1:5060\n#!ifdef WITH_TLS\nlisten=tls:192.0.2.2:5061\n#!endif\n"
    assert listen_addresses(text) == ["192.0.2.1"]
    assert listen_addresses("#!define WITH_TLS\n" + text) == ["192.0.2.1", "192.0.2.2"]


@pytest.mark.skipif(not Path("/etc/kamailio/kamailio.cfg").exists(), reason="no packaged kamailio.cfg")
def test_the_packaged_stock_config() -> None:
    cfg = Path("/etc/kamailio/kamailio.cfg").read_text(encoding="utf-8")
    endpoints = rpc_endpoints(cfg, "/run/kamailio")
    assert endpoints.socket == "/run/kamailio/kamailio_rpc.sock"
