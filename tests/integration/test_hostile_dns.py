# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile DNS (issue 13, items 1, 2 and the DNS half of 10) on real software.

A real Knot zone serves one hostile version of region 1's SRV record at a time: injection labels
(``x;obproxy=sip:evil``, quotes, spaces, '=', non-ASCII), a bad label shape, thousands of targets,
a wrong port, port 0, a CNAME target, the '.' target (alone and among others), a huge TTL, a target
outside the /28s. Each goes through the SRV audit, the plan, the installed SRV refresher against a
running Kamailio (dispatcher.list on disk and the live dispatcher view must not change and never
carry an injected attribute) and the probe's DNS step. The suite prints what it tried (records,
outcomes per stage, crashes) and requires 0 crashes.

Addresses: a harness lab block (BlockLease + Topology), DNS on a leased 127.0.53.x.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
import typing as t
from pathlib import Path

import pytest

from ansible_collections.commsgw.routing.plugins.module_utils.probe import settings as probe_settings
from ansible_collections.commsgw.routing.plugins.module_utils.srv import deployment as srv
from ansible_collections.commsgw.routing.plugins.module_utils.probe.dns import resolve_record
from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Sbc
from ansible_collections.commsgw.routing.plugins.module_utils.plan.site_plan import build_site_plan
from ansible_collections.commsgw.routing.plugins.module_utils.validation.validate import validate_deployment
from ansible_collections.commsgw.routing.plugins.plugin_utils.kamailio_render import KamailioRenderError, render_kamailio
from harness.kamailio import AcgLab, BlockLease, Topology, rendered_path
from harness.refresher_install import install_refresher
from harness.tools import needs

pytestmark = [pytest.mark.integration, needs("kamailio", "knotd")]

DOMAIN = "acg-hostile.test"
EVIL = "obproxy=sip:evil"
OUTSIDE = "192.0.2.10"  # TEST-NET-1: outside every /28 of the lab; nothing is ever sent there
HUGE_TTL = 2147483647   # RFC 2181's largest TTL
MANY = 1500  # about 63 KB over TCP: SRV targets are never compressed (RFC 2782), 64 KB is the DNS limit


class Case(t.NamedTuple):
    label: str
    lines: list[str]   # zone-file lines: region 1's SRV record and whatever it points at
    expect: str        # DnsLookupError kind, "outside" or "accepted" (a usable record)


class Lab:
    def __init__(self, lab: AcgLab, tmp: Path) -> None:
        self.lab = lab
        self.topo = lab.topo
        self.tmp = tmp
        self.srv1 = "_sip._tls.pstn-region1." + DOMAIN
        self.srv2 = "_sip._tls.pstn-region2." + DOMAIN
        self.deployment, findings = validate_deployment(self.topo.deployment_raw(lab.routing, "udp"),
                                                        [Sbc(host="sbc-ams-1", site="ams"),
                                                         Sbc(host="sbc-fra-1", site="fra")])
        assert not findings.errors
        self.resolver = srv.ResolverSettings(nameservers=[lab.dns.address], timeout_s=2.0)
        self.dispatcher_list = rendered_path(lab.cfg_dir, "dispatcher.list")
        self.spec = lab.cfg_dir / "commsgw-srv.json"

    # -- DNS
    def serve(self, region1_lines: t.Sequence[str]) -> None:
        """Region 2 and every A record as the lab has them; region 1's SRV record from ``region1_lines``."""
        records, a = self.topo.dns_records()
        self.lab.dns.set_records(srv={self.srv2: records[self.srv2]}, a=a, ttl=60, extra=list(region1_lines))

    def good_lines(self, ttl: int = 60) -> list[str]:
        records, _a = self.topo.dns_records()
        return ["%s. %d IN SRV %d %d %d %s." % (self.srv1, ttl, p, w, port, target)
                for p, w, port, target in records[self.srv1]]

    # -- the refresher, installed as the role installs it (script + its libraries, no Ansible)
    def install_refresher(self) -> Path:
        where = self.tmp / "refresher"
        where.mkdir()
        return install_refresher(where)

    def refresh(self, script: Path) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the SBC host has no collection
        return subprocess.run([sys.executable, str(script), "--spec", str(self.spec), "--force",
                               "--allowed-dir", str(self.lab.run_dir), "--state-dir", str(self.tmp),
                               "--nameserver", self.lab.dns.address, "--dns-timeout", "2"],
                              capture_output=True, text=True, timeout=60, check=False, env=env)

    def live_rows(self) -> list[tuple[int, str, str]]:
        """(set id, URI, attribute string) of every destination Kamailio routes over now."""
        assert self.lab.kamailio is not None
        result = self.lab.kamailio.rpc("dispatcher.list")
        rows = []
        for record in result.get("RECORDS") or []:
            for target in record["SET"].get("TARGETS") or []:
                dest = target["DEST"]
                attrs = dest.get("ATTRS") or {}
                rows.append((int(record["SET"]["ID"]), dest["URI"], str(attrs.get("BODY", attrs))))
        return sorted(rows)


def _zone_label(text: str) -> str:
    """``text`` as one zone-file label: every byte but letters, digits and '-' as \\DDD."""
    return "".join(chr(b) if chr(b).isalnum() and b < 0x80 or b == 0x2d else "\\%03d" % b
                   for b in text.encode("utf-8"))


def _cases(lab: Lab) -> list[Case]:
    srv1 = lab.srv1
    inside = lab.topo.region1(1)

    def record(*targets: tuple[int, str], ttl: int = 60) -> list[str]:
        """The hostile target(s) at priority 10 and the lab's good backup at 20: the same priority tiers as
        the rendered file, so that without the checks the refresher would write and reload the answer."""
        return (["%s. %d IN SRV 10 50 %d %s" % (srv1, ttl, port, target) for port, target in targets]
                + ["%s. %d IN SRV 20 0 5060 region1-sip3.%s." % (srv1, ttl, DOMAIN)])

    def named(label: str) -> list[str]:
        """A record whose one target has the label ``label`` and an in-range address, so that only the
        name check stands between it and dispatcher.list."""
        name = "%s.%s." % (_zone_label(label), DOMAIN)
        return record((5060, name)) + ["%s 60 IN A %s" % (name, inside)]

    many = record()[-1:] + ["%s. 60 IN SRV 10 1 5060 m%d.%s." % (srv1, n, DOMAIN) for n in range(MANY - 1)]
    many += ["m%d.%s. 60 IN A %s" % (n, DOMAIN, lab.topo.region1(1 + n % 14)) for n in range(MANY - 1)]
    good = "region1-sip1.%s." % DOMAIN
    return [
        Case("injection ';' in a label", named("x;" + EVIL), srv.BAD_TARGET_NAME),
        Case("injection ';' mid-name", named("p1;" + EVIL + ";tls=evil"), srv.BAD_TARGET_NAME),
        Case("double quote", named('q"uote'), srv.BAD_TARGET_NAME),
        Case("space", named("sp ace"), srv.BAD_TARGET_NAME),
        Case("equals sign", named("a=b"), srv.BAD_TARGET_NAME),
        Case("non-ASCII look-alike (U+0430)", named("\u0430cg"), srv.BAD_TARGET_NAME),
        Case("control character", named("nl\nx"), srv.BAD_TARGET_NAME),
        Case("underscore", named("_sip"), srv.BAD_TARGET_NAME),
        Case("leading hyphen", named("-peer"), srv.BAD_TARGET_NAME),
        Case("%d targets" % MANY, many, srv.TOO_MANY_TARGETS),
        Case("wrong port 5070", record((5070, good)), srv.UNEXPECTED_PORT),
        Case("wrong port 22 next to a good target", record((5060, good), (22, "region1-sip2.%s." % DOMAIN)),
             srv.UNEXPECTED_PORT),
        Case("port 0", record((0, good)), srv.PORT_ZERO),
        Case("CNAME target", record((5060, "alias.%s." % DOMAIN)) + ["alias.%s. 60 IN CNAME %s" % (DOMAIN, good)],
             srv.TARGET_ALIAS),
        Case("'.' target alone", ["%s. 60 IN SRV 0 0 0 ." % srv1], srv.NO_SERVICE),
        Case("'.' target among good ones", lab.good_lines() + ["%s. 60 IN SRV 0 0 0 ." % srv1], srv.NO_SERVICE),
        Case("target outside the /28s", record((5060, good), (5060, "rogue.%s." % DOMAIN))
             + ["rogue.%s. 60 IN A %s" % (DOMAIN, OUTSIDE)], "outside"),
        Case("huge TTL", lab.good_lines(ttl=HUGE_TTL), "accepted"),
    ]


@pytest.fixture(scope="module")
def hostile_lab(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Lab]:
    tmp = tmp_path_factory.mktemp("hostile-dns")
    lease = BlockLease()
    lab = AcgLab(tmp / "lab", Topology(block=lease.block, domain=DOMAIN))
    try:
        lab.start()
        yield Lab(lab, tmp)
    finally:
        lab.stop()
        lease.close()


def test_hostile_srv_records_never_reach_the_sbc(hostile_lab: Lab) -> None:
    lab = hostile_lab
    script = lab.install_refresher()
    rendered = lab.dispatcher_list.read_bytes()
    live = lab.live_rows()
    assert live and not any("evil" in row[2] for row in live)
    # Baseline: the good record, resolved by the refresher, gives back the rendered file byte for byte.
    lab.serve(lab.good_lines())
    first = lab.refresh(script)
    assert first.returncode == 0, first.stderr
    assert lab.dispatcher_list.read_bytes() == rendered

    tried: collections.Counter[str] = collections.Counter()
    crashes: list[str] = []
    problems: list[str] = []

    def stage(name: str, case: Case, check: t.Callable[[], t.Optional[str]]) -> None:
        try:
            outcome = check()
        except Exception as exc:  # pylint: disable=broad-except  # a crash is what this suite counts
            crashes.append("%s / %s: %s: %s" % (case.label, name, type(exc).__name__, exc))
            return
        tried["%s: %s" % (name, outcome)] += 1

    for case in _cases(lab):
        lab.serve(case.lines)

        def audit(case: Case = case) -> str:
            answers, findings = srv.resolve_deployment(lab.deployment, lab.resolver)
            mine = [f for f in findings if f.path == "service_regions[0].hostname"]
            if case.expect == "accepted":
                if mine or lab.srv1 not in answers:
                    problems.append("audit refused %s: %s" % (case.label, [f.render() for f in mine]))
                return "accepted"
            if case.expect == "outside":
                if not any(f.rule == "R-07" and OUTSIDE in f.message for f in mine):
                    problems.append("audit missed %s: %s" % (case.label, [f.render() for f in mine]))
                return "outside"
            kinds = [f.value for f in mine]
            if kinds != [case.expect] or lab.srv1 in answers:
                problems.append("audit of %s gave %s, expected [%s]" % (case.label, kinds, case.expect))
            return str(kinds[0]) if kinds else "nothing"

        def plan(case: Case = case) -> str:
            answers, _findings = srv.resolve_deployment(lab.deployment, lab.resolver)
            site_plan = build_site_plan(lab.deployment, lab.deployment.sites[0], answers)
            group = next(g for g in site_plan["trunk_groups"] if g["srv_name"] == lab.srv1)
            if case.expect == "accepted":
                return "peers %d" % len(group["peers"] or [])
            if case.expect == "outside":
                try:
                    render_kamailio(site_plan, lab.lab.settings, lab.lab.version)
                except KamailioRenderError:
                    return "render refused"
                problems.append("a plan with a target outside the /28s rendered (%s)" % case.label)
                return "rendered"
            if group["peers"] is not None:
                problems.append("%s gave peers in the plan: %s" % (case.label, group["peers"][:3]))
            return "no peers"

        def refresher(case: Case = case) -> str:
            result = lab.refresh(script)
            text = lab.dispatcher_list.read_bytes()
            if text != rendered or b"evil" in text:
                problems.append("refresher changed dispatcher.list on %s:\n%s" % (case.label, result.stderr[-2000:]))
            now_live = lab.live_rows()
            if now_live != live or any("evil" in row[2] for row in now_live):
                problems.append("live dispatcher view changed on %s: %s" % (case.label, now_live))
            if "Traceback" in result.stderr:
                crashes.append("refresher / %s: %s" % (case.label, result.stderr[-1500:]))
            if case.expect == "accepted":
                state = json.loads((lab.tmp / ".commsgw-srv-state.json").read_text())
                wait = state["records"][lab.srv1]["next_due"] - time.time()
                if result.returncode != 0 or not 0 < wait <= 3600 + 5:
                    problems.append("huge TTL: rc %d, next look in %.0f s" % (result.returncode, wait))
                return "kept (rc %d)" % result.returncode
            expected_word = "outside" if case.expect == "outside" else "[%s]" % case.expect
            if result.returncode != 1 or expected_word not in result.stderr:
                problems.append("refresher on %s: rc %d, no %r in its log:\n%s"
                                % (case.label, result.returncode, expected_word, result.stderr[-1500:]))
            return "refused (rc %d)" % result.returncode

        def probe_dns(case: Case = case) -> str:
            group = next(g for g in lab.lab.plan["trunk_groups"] if g["srv_name"] == lab.srv1)
            record = dict(group, srv_limits=lab.lab.plan["srv_limits"])
            settings = probe_settings.ProbeSettings(resolver=lab.resolver, allowed_transports=("udp",))
            report, targets = resolve_record(
                record, group["ip_ranges"], "sip", "udp", settings, "trunk_groups[region1]")
            if case.expect == "accepted":
                return "ok, %d targets" % len(targets)
            if case.expect == "outside":
                if not report["out_of_range"] or any(tgt.address == OUTSIDE and tgt.in_range for tgt in targets):
                    problems.append("probe DNS step missed the target outside the /28s: %s" % report)
                return "out of range reported"
            if report["kind"] != case.expect or targets:
                problems.append("probe DNS step on %s: kind %s, %d targets"
                                % (case.label, report["kind"], len(targets)))
            return str(report["kind"])

        for name, check in (("audit", audit), ("plan", plan), ("refresher", refresher), ("probe-dns", probe_dns)):
            stage(name, case, check)

    cases = _cases(lab)
    print("\nhostile DNS: %d records tried (%d SRV rows in all), %d stage runs, crashes: %d"
          % (len(cases), sum(len([x for x in c.lines if " SRV " in x]) for c in cases), sum(tried.values()),
             len(crashes)))
    for outcome, count in sorted(tried.items()):
        print("  %-40s %d" % (outcome, count))
    assert crashes == [], "\n".join(crashes)
    assert problems == [], "\n".join(problems)
    assert lab.lab.kamailio is not None and lab.lab.kamailio.running
