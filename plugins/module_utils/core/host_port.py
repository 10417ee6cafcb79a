# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``host:port`` parser: ``host``, ``host:port``, ``[IPv6]`` and ``[IPv6]:port``.

It only splits and checks the port; whether the host is acceptable (IPv4 only, an RFC 1123 name...)
is the caller's rule. A ``HostPortError`` says what is wrong and what is expected; callers put it
under the inventory field or option the value came from.
"""

from __future__ import annotations

import ipaddress
import re
import typing as t

EXPECTED = "host or IPv4 with an optional :port (1-65535), or [IPv6]:port"
# ASCII digits only: str.isdigit() also accepts '¹' or '٣', which int() then refuses.
_PORT_RE = re.compile(r"[0-9]{1,5}\Z")


class HostPortError(ValueError):
    """``value`` is not host[:port]; ``problem`` says why (e.g. 'has no valid port')."""

    def __init__(self, problem: str, value: t.Any) -> None:
        super().__init__("%r %s; expected %s" % (value, problem, EXPECTED))
        self.problem = problem
        self.value = value


class HostPort(t.NamedTuple):
    host: str
    port: t.Optional[int]


def _port(text: str, value: t.Any) -> int:
    if not text:
        raise HostPortError("has an empty port after ':'", value)
    if not _PORT_RE.match(text) or not 1 <= int(text) <= 65535:
        raise HostPortError("has no valid port (1-65535)", value)
    return int(text)


def split_host_port(value: t.Any, default_port: t.Optional[int] = None, require_port: bool = False) -> HostPort:
    """``value`` -> (host, port). Without a port: ``default_port``, or an error when ``require_port``.

    IPv6 literals must be bracketed (``[2001:db8::1]:5060``); the host comes back without brackets.
    """
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise HostPortError("is empty, not a string or has surrounding spaces", value)
    if value.startswith("["):
        inner, bracket, rest = value[1:].partition("]")
        if not bracket:
            raise HostPortError("has no closing ']'", value)
        try:
            ipaddress.IPv6Address(inner)
        except ValueError:
            raise HostPortError("has no IPv6 address inside [ ]", value) from None
        if rest and not rest.startswith(":"):
            raise HostPortError("has text after ']' that is not :port", value)
        host, port_text = inner, rest[1:] if rest else None
    elif value.count(":") > 1:
        raise HostPortError("has several ':' (an IPv6 address needs brackets: [address]:port)", value)
    else:
        host, colon, port_text = value.partition(":")
        if not colon:
            port_text = None
        if not host:
            raise HostPortError("has no host before ':'", value)
    if port_text is None:
        if require_port:
            raise HostPortError("has no port", value)
        return HostPort(host, default_port)
    return HostPort(host, _port(port_text, value))


def join_host_port(host: str, port: int) -> str:
    """The reverse: ``host:port``, an IPv6 address in brackets."""
    return "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)
