# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The programs a real-software test needs, as one pytest mark (skips locally, fails in CI)."""

from __future__ import annotations

import shutil

import pytest

# The Debian package that brings each program (scripts/debian-packages.txt installs them).
PACKAGES = {"kamailio": "kamailio", "sipp": "sip-tester", "knotd": "knot", "unshare": "util-linux",
            "openssl": "openssl", "systemd-nspawn": "systemd-container", "ssh": "openssh-client",
            "debootstrap": "debootstrap"}


def needs(*programs: str) -> pytest.MarkDecorator:
    missing = [name for name in programs if shutil.which(name) is None]
    return pytest.mark.skipif(bool(missing), reason="needs %s" % ", ".join(
        "%s (%s)" % (name, PACKAGES.get(name, name)) for name in missing))
