# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one host:port parser (module_utils.host_port) and the inventory fields that use it."""

from __future__ import annotations

import typing as t

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.core.host_port import (
    HostPort, HostPortError, join_host_port, split_host_port)
from ansible_collections.commsgw.routing.plugins.module_utils.sbc.settings import SettingsError, normalise_sbc_settings
from ansible_collections.commsgw.routing.tests.unit.plan.test_mcp import _errors, _raw


@pytest.mark.parametrize("value,default,expected", [
    ("10.0.0.1:5060", None, HostPort("10.0.0.1", 5060)),
    ("core.example.net", 5060, HostPort("core.example.net", 5060)),
    ("core.example.net", None, HostPort("core.example.net", None)),
    ("[2001:db8::1]:5061", None, HostPort("2001:db8::1", 5061)),
    ("[2001:db8::1]", 5060, HostPort("2001:db8::1", 5060)),
    ("h:65535", None, HostPort("h", 65535)),
])
def test_splits(value: str, default: t.Optional[int], expected: HostPort) -> None:
    assert split_host_port(value, default_port=default) == expected
    if expected.port is not None and value.rpartition(":")[2].isdigit():
        assert join_host_port(*expected) == value


@pytest.mark.parametrize("value,problem", [
    ("", "is empty"),
    (None, "not a string"),
    (5060, "not a string"),
    (" h:5060", "surrounding spaces"),
    ("h:", "has an empty port"),
    (":5060", "has no host"),
    ("h:0", "has no valid port"),
    ("h:65536", "has no valid port"),
    ("h:50a", "has no valid port"),
    ("h:\u00b9", "has no valid port"),  # '¹'.isdigit() is True, int('¹') raises
    ("h:-1", "has no valid port"),
    ("2001:db8::1", "IPv6 address needs brackets"),
    ("2001:db8::1:5060", "IPv6 address needs brackets"),
    ("[2001:db8::1", "has no closing ']'"),
    ("[2001:db8::1]5060", "is not :port"),
    ("[core.example.net]:5060", "no IPv6 address inside"),
])
def test_refuses_with_the_reason(value: t.Any, problem: str) -> None:
    with pytest.raises(HostPortError, match="expected host or IPv4") as caught:
        split_host_port(value, default_port=5060)
    assert problem in caught.value.problem


def test_missing_port_when_required() -> None:
    with pytest.raises(HostPortError, match="has no port"):
        split_host_port("10.0.0.1", require_port=True)


SBC = {"acg_listen": {"address": "192.0.2.10"}, "core_listen": {"address": "10.0.0.10"},
       "config_dir": "/etc/kamailio-acg", "run_dir": "/run/kam"}


@pytest.mark.parametrize("hop,message", [
    ("10.0.0.20", r"core_next_hop: has no port"),
    ("10.0.0.20:\u00b9", r"core_next_hop: has no valid port"),  # crashed with ValueError before
    ("10.0.0.20:70000", r"core_next_hop: has no valid port"),
    ("[2001:db8::20]:5060", r"core_next_hop: has no valid host"),
    ("a:b:c", r"core_next_hop: has several ':'"),
    (None, r"core_next_hop: is empty, not a string"),
])
def test_core_next_hop_errors_name_the_field(hop: t.Any, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        normalise_sbc_settings(dict(SBC, core_next_hop=hop), "udp", host="sbc1")


def test_core_next_hop_is_split_once() -> None:
    settings = normalise_sbc_settings(dict(SBC, core_next_hop="core.example.net:5070"), "udp", host="sbc1")
    assert settings["core_next_hop"] == {"host": "core.example.net", "port": 5070}


@pytest.mark.parametrize("hop,ok", [
    ("core.example.net", True), ("10.0.0.30:5060", True), ("10.0.0.30:\u00b9", False), ("10.0.0.30:0", False),
    ("[2001:db8::1]:5060", False), ("core.example.net:", False), ("core;x=y:5060", False),
])
def test_mcp_continue_next_hop_uses_the_same_parser(hop: str, ok: bool) -> None:
    errors = _errors(_raw({"policy": "continue", "continue_next_hop": hop}))
    assert (errors.get("mcp.continue_next_hop") is None) is ok, errors
