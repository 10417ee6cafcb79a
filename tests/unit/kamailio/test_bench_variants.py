# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The diagnostic variants of bench/kamailio_bench.py still apply to what the templates render.

Why: a variant is the rendered kamailio.cfg with one part cut out by pattern; the bench refuses a pattern that
matches nothing, but only at bench time, minutes into a run. Here every variant is applied to a TLS render of
this checkout's templates, so a template change that breaks one fails in the unit suite instead.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_kamailio_tls_render import R1, _cfg  # noqa: E402  pylint: disable=wrong-import-position

BENCH = Path(__file__).resolve().parents[3] / "bench" / "kamailio_bench.py"


def _bench():
    spec = importlib.util.spec_from_file_location("commsgw_kamailio_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


BENCH_MODULE = _bench()
IDENTITY = set(BENCH_MODULE.VARIANT_MEMORY_MANAGER)  # variants that change how Kamailio starts, not its config


@pytest.mark.parametrize("name", sorted(BENCH_MODULE.VARIANTS))
def test_every_variant_applies_to_the_rendered_config(name: str) -> None:
    cfg = _cfg()
    variant = BENCH_MODULE.VARIANTS[name][1](cfg, R1)
    assert (variant == cfg) == (name in IDENTITY)


def test_the_floor_variant_has_none_of_the_checks_it_claims_to_take_out() -> None:
    floor = BENCH_MODULE.VARIANTS["floor"][1](_cfg(), R1)
    for gone in ("route(COMMSGW_TLS_CHECK_REPLY);", "route(COMMSGW_TLS_SNI);", "if (!sanity_check(", "s.encode.hexa",
                 'sl_send_reply("513"', 't_on_branch("COMMSGW_TLS_BRANCH")', "log_prefix="):
        assert gone not in floor, gone
    # No dialog name read from the Route of an in-dialog request, but the name still reset for each one (else a
    # request would take the name an earlier one left in the process).
    common = floor[floor.index("route[COMMON] {"):]
    common = common[:common.index("\n}\n")]
    assert "route(COMMSGW_TLS_NAME_IN_URI)" not in common and '$var(commsgw_dialog_tls) = "";' in common
    # What the requirements' routing needs stays: the ACL (R-08), the dispatcher's failover (R-11..R-16).
    for kept in ("allow_source_address(", "ds_select_routes(", 't_on_failure("ACG_FAILURE")'):
        assert kept in floor, kept
