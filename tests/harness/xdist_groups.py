# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test module's pytest-xdist unit of work, read from its source: the xdist_group its pytestmark names, or
the module itself. tests/conftest.py schedules by it (the controller process never imports the modules) and
tests/unit/test_parallel_safety.py checks the modules that may run side by side by the same reading."""

from __future__ import annotations

import re

_GROUP_MARK = re.compile(r"xdist_group\(\s*(?:name\s*=\s*)?[\"']([^\"']+)[\"']")


def module_unit(source: str, module: str) -> str:
    """The group named in ``source`` (the first, should it name several), else ``module`` (its node id path)."""
    found = _GROUP_MARK.findall(source)
    return found[0] if found else module
