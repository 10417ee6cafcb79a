# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pytest set-up and fixtures (keep it small; add fixtures at the end).

Imports use ``ansible_collections.commsgw.routing...``. pytest.ini adds ``.collections`` to the path,
which exists only after scripts/test ran; on a fresh clone this file creates the same symlink under
``tests/output/collections`` (ignored by git) so a bare ``pytest`` works without PYTHONPATH.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import sys
import tempfile
import typing as t
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"


def _collection_importable() -> bool:
    try:
        return importlib.util.find_spec("ansible_collections.commsgw.routing.plugins") is not None
    except ImportError:
        return False


def _ensure_collection_path() -> None:
    if _collection_importable():
        return
    root = TESTS / "output" / "collections"
    link = root / "ansible_collections" / "commsgw" / "routing"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        try:
            link.symlink_to(REPO, target_is_directory=True)
        except FileExistsError:  # a parallel pytest run made it first
            pass
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()


_ensure_collection_path()
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # `from harness.dns import DnsServer` whatever the import mode

from harness.dns import DnsServer, SilentNameserver  # noqa: E402  (needs the path set above)
from harness.xdist_groups import module_unit  # noqa: E402


def _first_address_index() -> int:
    # Spread concurrent pytest processes over the 127.0.53.x pool; leases sort out any overlap.
    return (os.getpid() * 7) % 254


@pytest.fixture
def dns_server(tmp_path: Path) -> t.Iterator[DnsServer]:
    """A running Knot DNS server with no records yet, on its own 127.0.53.x address, port 53."""
    server = DnsServer.start_on_free_address(tmp_path / "dns", first=_first_address_index())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def silent_nameserver() -> t.Iterator[SilentNameserver]:
    """A 127.0.53.x address whose port 53 accepts queries and never answers (timeout tests)."""
    server = SilentNameserver.start_on_free_address(first=(_first_address_index() + 127) % 254)
    try:
        yield server
    finally:
        server.stop()


# -- parallel runs (pytest-xdist, scripts/test: -n N --dist loadscope) ------------------------------------
# A module's tests share module fixtures and the module's own loopback block, so a module is one unit
# of work (pytest_xdist_make_scheduler below); modules that name one xdist_group in their pytestmark run
# one after the other on one worker. The SBC host suites (marker sbc_hosts: systemd-nspawn guests, minutes
# each) start first and share one group: they run one after the other, since with two or three labs at once
# on a 2-core machine test_production_tls's peers-closing-every-connection test lost a BYE (408) or a ping in
# every such run. tests/unit/test_parallel_safety.py checks that modules which may run side by side use
# different fixed addresses, bridges and guest names.


def _run_order(item: pytest.Item) -> int:
    """Longest work first: the SBC host suites, then the integration modules, then the unit tests."""
    if item.get_closest_marker("sbc_hosts") is not None:
        return 0
    return 1 if item.nodeid.startswith("tests/integration/") else 2


@functools.lru_cache(maxsize=None)
def _module_unit(module: str) -> str:
    """The unit of work of the test module at ``module`` (a node id's path), read from its source."""
    path = Path(__file__).resolve().parent.parent / module
    return module_unit(path.read_text(encoding="utf-8"), module) if path.is_file() else module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: t.Any) -> t.Any:
    """One module is one unit of work, and the modules that name a group (the SBC host suites) are one
    unit between them. xdist's own --dist loadgroup does this by renaming node ids on the workers, which
    pytest 9.2 no longer lets a plugin do (Node.nodeid is derived, not stored): its groups were silently
    ignored and the SBC host suites ran side by side."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _module_unit(nodeid.split("::", 1)[0])

    return ModuleScheduling(config, log)


@pytest.hookimpl(tryfirst=True)  # before any other plugin orders the items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A stable sort: the order inside each module stays as written (module fixtures, ordered scenarios).
    items.sort(key=_run_order)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> t.Iterator[None]:
    """In CI (CI=true) a skipped test fails: a missing kamailio, sipp or knotd must not pass as green."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = "skipped in CI, where every test must run: %s" % (report.longrepr,)


@pytest.fixture(autouse=True, scope="session")
def _temp_dirs_searchable(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Kamailio under test runs as user kamailio (as on an SBC), so the temporary directories that
    hold its configuration must be searchable by it; pytest makes them 0700. Search only (o+x):
    nothing in them becomes listable or readable by other users."""
    def searchable(path: Path) -> Path:
        path.chmod(path.stat().st_mode | 0o011)
        return path

    base = tmp_path_factory.getbasetemp()
    # Up to the system's temporary directory: under pytest-xdist the base is one level deeper
    # (/tmp/pytest-of-root/pytest-N/popen-gwN), and every level must be searchable.
    top = Path(tempfile.gettempdir()).resolve()
    for directory in (base, *base.parents):
        if directory == top or directory == Path("/") or directory.stat().st_uid != os.getuid():
            break
        searchable(directory)
    original = tmp_path_factory.mktemp

    def mktemp(basename: str, numbered: bool = True) -> Path:
        return searchable(original(basename, numbered))

    # tmp_path and every module fixture's mktemp go through the factory's mktemp.
    tmp_path_factory.mktemp = mktemp  # type: ignore[method-assign]


@pytest.fixture(autouse=True, scope="session")
def _push_state_removed(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[None]:
    """kamailio_config and kamailio_service keep an SBC's push state (backups, pending restart, lease) in
    /var/lib/commsgw-routing/<config dir escaped>, root's and outside the config dir; the SBCs of a test run
    live under its base temp dir, so their state goes with the run."""
    yield
    from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import STATE_BASE, state_dir_for

    prefix = os.path.basename(state_dir_for(str(tmp_path_factory.getbasetemp())))
    for name in os.listdir(STATE_BASE) if os.path.isdir(STATE_BASE) else []:
        if name.startswith(prefix + "-") or name.startswith(prefix + ".") or name == prefix:
            path = os.path.join(STATE_BASE, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
