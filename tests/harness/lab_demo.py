# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The steps of ``scripts/lab`` that are not playbooks: Kamailio runtime, test calls, failover, report.

``scripts/lab`` runs: simulator up -> onboard.yml -> probe.yml -> ``calls before`` ->
``region-down`` -> ``calls after`` -> ``report`` -> ``stop-sbcs`` + simulator down. Each step here is
a subcommand (``python -m harness.lab_demo STEP``) sharing state in ``<lab dir>/demo.json``, so the
shell script stays a readable list of steps and every step can be rerun alone. The inventory is
read (and templated) the way ansible-playbook reads it (harness.acg_sim.read_inventory); the SBC's
own view comes from its jsonrpcs socket through the collection's kamailio.runtime client.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
import typing as t
from pathlib import Path

from harness import acg_sim

from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (
    JsonRpc, RpcError, rpc_endpoints)

REPO = acg_sim.REPO
DEFAULT_LAB_DIR = REPO / ".lab"
CALLS = 6
CALL_RATE = 3.0
CALLER = "127.0.81.2"  # the operator core placing the calls (the SBCs' core_next_hop is 127.0.81.1)


class DemoError(RuntimeError):
    pass


# -- inventory ----------------------------------------------------------------------------------
def lab_facts(inventory: Path, lab_dir: Path) -> dict[str, t.Any]:
    facts = acg_sim.read_inventory(inventory, {"commsgw_lab_dir": str(lab_dir)})
    deployment = facts["deployment"]
    sites = deployment["sites"]
    by_site = {info["site"]: host for host, info in sorted(facts["hosts"].items())}
    facts["site_a"] = {"site": sites[0]["name"], "region": sites[0]["service_region"],
                       "host": by_site.get(sites[0]["name"])}
    # None for a lab deployment (one region): there is nothing to fail over to.
    facts["other_region"] = next((r["name"] for r in deployment["service_regions"]
                                  if r["name"] != sites[0]["service_region"]), None)
    if facts["site_a"]["host"] is None:
        raise DemoError("no SBC host for site %s in %s" % (sites[0]["name"], inventory))
    return facts


def _sbc(facts: t.Mapping[str, t.Any], host: str) -> dict[str, t.Any]:
    sbc = facts["hosts"][host]["sbc"]
    if not sbc:
        raise DemoError("%s has no commsgw_sbc" % host)
    return t.cast("dict[str, t.Any]", sbc)


def sbc_view(sbc: t.Mapping[str, t.Any]) -> dict[str, str]:
    """Peer address -> the SBC's dispatcher flags (AP active, IP inactive, TP trying...)."""
    cfg = Path(sbc["config_dir"]) / "kamailio.cfg"
    rpc = JsonRpc(rpc_endpoints(cfg.read_text(), sbc["run_dir"]), timeout_s=3.0)
    result = rpc.call("dispatcher.list") or {}
    states: dict[str, str] = {}
    for record in result.get("RECORDS", []):
        for target in record["SET"].get("TARGETS", []):
            uri = target["DEST"]["URI"]
            address = uri.split(":", 2)[1].split(";")[0]
            states[address] = target["DEST"]["FLAGS"]
    return states


# -- state --------------------------------------------------------------------------------------
def _state_path(lab_dir: Path) -> Path:
    return lab_dir / "demo.json"


def load_state(lab_dir: Path) -> dict[str, t.Any]:
    with contextlib.suppress(OSError, ValueError):
        return t.cast("dict[str, t.Any]", json.loads(_state_path(lab_dir).read_text()))
    return {}


def save_state(lab_dir: Path, state: t.Mapping[str, t.Any]) -> None:
    lab_dir.mkdir(parents=True, exist_ok=True)
    tmp = _state_path(lab_dir).with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    tmp.replace(_state_path(lab_dir))


def _counts(status: t.Mapping[str, t.Any], what: str) -> dict[str, int]:
    return {p["address"]: int(p["received"].get(what, 0)) for p in status["peers"]}


# -- steps --------------------------------------------------------------------------------------
def step_runtime() -> int:
    """Print the rootfs the push role must run Kamailio from (empty: the host's own Kamailio 6.0+)."""
    from harness import rootfs
    host = rootfs.host_kamailio_version()
    if host and rootfs.version_tuple(host) >= (6, 0):
        print("Kamailio %s on this host runs TLS itself" % host, file=sys.stderr)
        return 0
    print("Kamailio %s here must not run TLS (memory corruption under OpenSSL 3): using Kamailio 6.0 from a "
          "Debian 13 root filesystem (built once with debootstrap, then cached)" % (host or "(none)"), file=sys.stderr)
    try:
        runtime = rootfs.kamailio6_runtime()
    except rootfs.RootfsUnavailable as exc:
        print("cannot get Kamailio 6.0: %s" % exc, file=sys.stderr)
        return 1
    print("Kamailio %s from %s" % (runtime.version, runtime.rootfs), file=sys.stderr)
    print(runtime.rootfs or "")
    return 0


def step_wait(facts: t.Mapping[str, t.Any], timeout_s: float) -> int:
    """Bounded wait until site A's SBC sees its local region's first-tier peers active."""
    host = facts["site_a"]["host"]
    sbc = _sbc(facts, host)
    status = acg_sim.request(facts["state_dir"], {"command": "status"})["status"]
    local = [p["address"] for p in status["peers"] if p["region"] == facts["site_a"]["region"] and p["priority"] ==
             min(q["priority"] for q in status["peers"] if q["region"] == facts["site_a"]["region"])]
    deadline = time.monotonic() + timeout_s
    view: dict[str, str] = {}
    while time.monotonic() < deadline:
        with contextlib.suppress(RpcError, OSError):
            view = sbc_view(sbc)
            if all(view.get(a, "")[:1] == "A" for a in local):
                print("%s sees %s active" % (host, ", ".join(local)), file=sys.stderr)
                return 0
        time.sleep(0.2)
    print("%s does not see %s active within %.0f s: %s" % (host, local, timeout_s, view), file=sys.stderr)
    return 1


def step_calls(facts: t.Mapping[str, t.Any], lab_dir: Path, phase: str, count: int) -> int:
    """``count`` calls from the operator core through site A's SBC; per-peer INVITE deltas saved."""
    host = facts["site_a"]["host"]
    core = _sbc(facts, host)["core_listen"]
    target = "%s:%d" % (core["address"], core["port"])
    state_dir = facts["state_dir"]
    first = acg_sim.request(state_dir, {"command": "status"})["status"]
    started = time.monotonic()
    result = acg_sim.place_calls(state_dir, target, CALLER, count, rate=CALL_RATE, name="demo-" + phase)
    # INVITEs reach the peers before the caller sees the answer; no settling wait needed.
    status = acg_sim.request(state_dir, {"command": "status"})["status"]
    state = load_state(lab_dir)
    state.setdefault("phases", {})[phase] = {
        "via": "%s (%s) core side %s" % (host, facts["site_a"]["site"], target),
        "calls": count, "codes": result["codes"], "seconds": round(time.monotonic() - started, 1),
        # Per peer: INVITEs it received (tries, retries included) and calls it answered with 200.
        "invites": _delta(first, status, "INVITE"),
        "answered": _delta(first, status, "ANSWERED"),
        "sbc_view": _safe_view(facts, host),
        "sbc_version": _sbc_version(_sbc(facts, host)),
        "peers": [{k: p[k] for k in ("region", "address", "priority", "weight", "state")} for p in status["peers"]],
    }
    save_state(lab_dir, state)
    ok = result["codes"].get("200", 0)
    print("%s: %d/%d calls completed through %s in %.1f s (answers: %s)" % (
        phase, ok, count, host, time.monotonic() - started,
        ", ".join("%s x%d" % kv for kv in sorted(result["codes"].items()))), file=sys.stderr)
    return 0


def _delta(first: t.Mapping[str, t.Any], last: t.Mapping[str, t.Any], what: str) -> dict[str, int]:
    before, after = _counts(first, what), _counts(last, what)
    return {a: after[a] - before.get(a, 0) for a in after}


def _sbc_version(sbc: t.Mapping[str, t.Any]) -> str:
    """What the running SBC answers to core.version (which Kamailio really serves the calls)."""
    cfg = Path(sbc["config_dir"]) / "kamailio.cfg"
    try:
        return str(JsonRpc(rpc_endpoints(cfg.read_text(), sbc["run_dir"]), timeout_s=3.0).call("core.version")).strip()
    except (RpcError, OSError) as exc:
        return "unknown (%s)" % exc


def _safe_view(facts: t.Mapping[str, t.Any], host: str) -> dict[str, str]:
    try:
        return sbc_view(_sbc(facts, host))
    except (RpcError, OSError, DemoError) as exc:
        return {"error": str(exc)}


def step_region_down(facts: t.Mapping[str, t.Any], lab_dir: Path, region: str) -> int:
    acg_sim.request(facts["state_dir"], {"command": "region-down", "region": region, "mode": "silent"})
    state = load_state(lab_dir)
    state["region_down"] = {"region": region, "at": time.time()}
    save_state(lab_dir, state)
    print("%s is down: its peers accept connections and never answer" % region, file=sys.stderr)
    return 0


def build_report(facts: t.Mapping[str, t.Any], state: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Per peer: INVITEs received and calls answered, before and after the region went down; the
    verdict: every call completed both times, answered only in the local region before and only in
    the other region after."""
    phases = state.get("phases", {})
    before, after = phases.get("before", {}), phases.get("after", {})
    status = acg_sim.request(facts["state_dir"], {"command": "status"})["status"]
    local, other = facts["site_a"]["region"], facts["other_region"]
    peers = []
    for p in status["peers"]:
        row: dict[str, t.Any] = {"region": p["region"], "address": p["address"],
                                 "srv": "%d/%d" % (p["priority"], p["weight"]),
                                 "state": ("%s (region down)" % p["state"]) if p.get("region_outage") else p["state"],
                                 "sbc_after": (after.get("sbc_view") or {}).get(p["address"], "")}
        for name, phase in (("before", before), ("after", after)):
            row[name] = {"invites": (phase.get("invites") or {}).get(p["address"], 0),
                         "answered": (phase.get("answered") or {}).get(p["address"], 0)}
        peers.append(row)

    def by_region(phase: str, what: str) -> dict[str, int]:
        totals: dict[str, int] = {}
        for row in peers:
            totals[row["region"]] = totals.get(row["region"], 0) + row[phase][what]
        return totals

    def summary(name: str, phase: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
        return {"calls": phase.get("calls", 0), "completed": int((phase.get("codes") or {}).get("200", 0)),
                "codes": phase.get("codes") or {}, "seconds": phase.get("seconds"),
                "invites_by_region": by_region(name, "invites"), "answered_by_region": by_region(name, "answered")}

    b, a = summary("before", before), summary("after", after)
    a["region_down"] = (state.get("region_down") or {}).get("region")
    failover_ok = (b["calls"] > 0 and a["calls"] > 0 and b["completed"] == b["calls"] and a["completed"] == a["calls"]
                   and b["answered_by_region"].get(local, 0) == b["calls"] and b["answered_by_region"].get(other, 0) == 0
                   and a["answered_by_region"].get(other, 0) == a["calls"] and a["answered_by_region"].get(local, 0) == 0)
    return {"site": facts["site_a"], "local_region": local, "other_region": other, "peers": peers,
            "before": b, "after": a, "probe": state.get("probe"), "failover_ok": failover_ok,
            "sbc_version": after.get("sbc_version") or before.get("sbc_version")}


def format_report(report: t.Mapping[str, t.Any]) -> str:
    site = report["site"]
    width = 104
    lines = ["", "=" * width,
             "LAB REPORT - test calls from the operator core through %s (site %s, local region %s)" % (
                 site["host"], site["site"], report["local_region"]),
             "=" * width,
             "%-8s %-12s %-7s %-22s %-19s %-19s %s" % ("", "", "SRV", "", "before", "after %s down" % (
                 report["after"].get("region_down") or "region"), "SBC view"),
             "%-8s %-12s %-7s %-22s %-19s %-19s %s" % (
                 "region", "peer", "p/w", "state now", "INVITEs  answered", "INVITEs  answered", "after"),
             "-" * width]
    for p in report["peers"]:
        lines.append("%-8s %-12s %-7s %-22s %7d %9d   %7d %9d   %s" % (
            p["region"], p["address"], p["srv"], p["state"], p["before"]["invites"], p["before"]["answered"],
            p["after"]["invites"], p["after"]["answered"], p["sbc_after"]))
    lines.append("-" * width)
    for name, title in (("before", "before"), ("after", "after %s down" % report["after"].get("region_down"))):
        phase = report[name]
        lines.append("%-20s %s/%s calls completed in %s s, answered by %s (INVITEs received: %s)" % (
            title + ":", phase["completed"], phase["calls"], phase["seconds"],
            ", ".join("%s %d" % kv for kv in sorted(phase["answered_by_region"].items())),
            ", ".join("%s %d" % kv for kv in sorted(phase["invites_by_region"].items()))))
    lines.append("%-20s %s" % ("SBC software:", report.get("sbc_version")))
    if report.get("probe"):
        lines.append("%-20s %s" % ("probe verdicts:", ", ".join("%s %s" % kv for kv in sorted(report["probe"].items()))))
    lines.append("RESULT: %s" % (
        "FAILOVER OK - calls went to %s before, and completed through %s after %s went down" % (
            report["local_region"], report["other_region"], report["local_region"])
        if report["failover_ok"] else "FAILOVER NOT SHOWN - see the table above"))
    lines.append("(INVITEs include retries: after the region went down, the first calls tried its silent peers until "
                 "each INVITE timer expired. SBC view: Kamailio dispatcher flags, A active, I inactive, P probing.)")
    return "\n".join(lines)


def step_report(facts: t.Mapping[str, t.Any], lab_dir: Path) -> int:
    state = load_state(lab_dir)
    probe_dir = lab_dir / "probe"
    verdicts = {}
    for path in sorted(probe_dir.glob("*.json")):
        with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
            data = json.loads(path.read_text())
            reports = data.get("reports") or [data]
            verdicts[path.stem] = str(reports[0].get("verdict", "?")).upper()
    if verdicts:
        state["probe"] = verdicts
    report = build_report(facts, state)
    (lab_dir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    print(format_report(report))
    return 0 if report["failover_ok"] else 1


def step_stop_sbcs(facts: t.Mapping[str, t.Any], timeout_s: float = 15.0) -> int:
    """Stop every SBC Kamailio of the inventory (process mode: pid file in its run dir)."""
    for host, info in sorted(facts["hosts"].items()):
        sbc = info.get("sbc") or {}
        pid_file = Path(sbc.get("run_dir", "/nonexistent")) / "kamailio.pid"
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            continue
        if not acg_sim._alive(pid, b"kamailio"):
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and acg_sim._alive(pid, b"kamailio"):
            time.sleep(0.1)
        if acg_sim._alive(pid, b"kamailio"):
            os.kill(pid, signal.SIGKILL)
        print("stopped Kamailio of %s (pid %d)" % (host, pid), file=sys.stderr)
        with contextlib.suppress(OSError):
            pid_file.unlink()
    return 0


def main(argv: t.Optional[t.Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="lab_demo")
    parser.add_argument("--inventory", "-i", type=Path, default=REPO / "inventory" / "demo")
    parser.add_argument("--lab-dir", type=Path, default=Path(os.environ.get("COMMSGW_LAB_DIR", DEFAULT_LAB_DIR)))
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("runtime")
    sub.add_parser("wait").add_argument("--timeout", type=float, default=30.0)
    calls = sub.add_parser("calls")
    calls.add_argument("phase", choices=("before", "after"))
    calls.add_argument("--count", type=int, default=CALLS)
    sub.add_parser("region-down")
    sub.add_parser("report")
    sub.add_parser("stop-sbcs")
    args = parser.parse_args(argv)
    if args.step == "runtime":
        return step_runtime()
    lab_dir = args.lab_dir.resolve()
    try:
        facts = lab_facts(args.inventory, lab_dir)
        facts["state_dir"] = lab_dir / "acg-sim"
        if args.step == "wait":
            return step_wait(facts, args.timeout)
        if args.step == "calls":
            if args.phase == "before":
                save_state(lab_dir, {})
            return step_calls(facts, lab_dir, args.phase, args.count)
        if args.step in ("region-down", "report") and facts["other_region"] is None:
            raise DemoError("%s has a single service region: the failover demo needs two (inventory/demo)"
                            % args.inventory)
        if args.step == "region-down":
            return step_region_down(facts, lab_dir, facts["site_a"]["region"])
        if args.step == "report":
            return step_report(facts, lab_dir)
        return step_stop_sbcs(facts)
    except (acg_sim.SimError, DemoError) as exc:
        print("lab: %s" % exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
