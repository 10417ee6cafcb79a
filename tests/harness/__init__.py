# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test helpers that run real software on loopback (DNS server, PKI, Kamailio root file system).

tests/conftest.py puts tests/ on sys.path, so tests import them as ``from harness.dns import DnsServer``.
"""
