# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status page at ``/``: one self-contained HTML page (no external asset) for a glance during an incident.

Per site and region: the peers with their state, round trip, certificate expiry and the SBC's own view,
and a timeline of the last hour's probe results from the exporter's bounded history. The page never
starts a probe (it shows what scrapes, or the optional background probing, found). Everything from the
network (names, reason phrases) is HTML-escaped; the page's one style sheet and one script are allowed by
their hashes in its Content-Security-Policy, and nothing else is.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.exporter.metrics import (
    peer_name, sbc_peer_state, sbc_peer_states)

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.2em;margin:.2em 0}h3{font-size:1em;margin:1em 0 .3em}
.meta,.note{color:#555}section.site{background:#fff;border:1px solid #ddd;border-left:6px solid #999;
padding:.6em 1em;margin:1em 0}section.v-pass{border-left-color:#2e7d32}section.v-warn{border-left-color:#f9a825}
section.v-fail{border-left-color:#c62828}.badge{display:inline-block;padding:0 .5em;border-radius:3px;
color:#fff;font-size:.85em;background:#999}.pass{background:#2e7d32}.warn{background:#f9a825;color:#000}
.fail{background:#c62828}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.15em .6em;
border-bottom:1px solid #eee;font-variant-numeric:tabular-nums}tr.p-fail td{background:#fdecea}
tr.p-warn td{background:#fff8e1}.timeline{display:flex;gap:1px;align-items:center;margin:.2em 0}
.timeline .label{width:11em;flex:none;color:#555}.tick{width:4px;height:14px;background:#999;flex:none}
ul.reasons{margin:.3em 0;padding-left:1.2em;color:#7a1f1f}td:last-child{color:#555;font-size:.9em}
"""

SCRIPT = """
(function () {
  var age = document.getElementById("age");
  var at = Number(age.getAttribute("data-now"));
  var started = Date.now();
  function tick() {
    age.textContent = "page built " + Math.round((Date.now() - started) / 1000) + " s ago";
  }
  if (at > 0) { tick(); setInterval(tick, 1000); }
  setTimeout(function () { window.location.reload(); }, 30000);
})();
"""


def _sha256(text: str) -> str:
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src %s; script-src %s; img-src 'none'; base-uri 'none'; "
                           "form-action 'none'; frame-ancestors 'none'" % (_sha256(STYLE), _sha256(SCRIPT)))


def _e(value: t.Any) -> str:
    return html.escape(str(value), quote=True)


def _time(at: float) -> str:
    return _dt.datetime.fromtimestamp(at, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _badge(verdict: t.Optional[str]) -> str:
    verdict = verdict if verdict in ("pass", "warn", "fail") else "none"
    return '<span class="badge %s">%s</span>' % (verdict, _e(verdict.upper()))


def _peer_row(peer: t.Mapping[str, t.Any], sbc_state: t.Optional[str]) -> str:
    state = "healthy" if peer["healthy"] else (peer.get("failure") or "unhealthy")
    if peer.get("code") is not None:
        state += " (%s %s)" % (peer["code"], peer.get("reason") or "")
    rtt = "%.1f ms" % peer["rtt_ms"] if peer.get("rtt_ms") is not None else "-"
    days = (peer.get("tls") or {}).get("days_to_expiry")
    expiry = "%s (%d d)" % ((peer.get("tls") or {}).get("not_after"), days) if days is not None else "-"
    cells = [peer_name(peer), peer["target"], state, rtt, expiry]
    if sbc_state is not None:
        cells.append(sbc_state)
    cells.append((peer.get("detail") or "")[:200])
    return '<tr class="peer p-%s" data-peer="%s">%s</tr>' % (
        _e(peer["verdict"]), _e(peer_name(peer)), "".join("<td>%s</td>" % _e(c) for c in cells))


def _group(group: t.Mapping[str, t.Any], states: t.Optional[t.Mapping[t.Any, str]], mcp: bool) -> str:
    title = "%s %s (%s)" % ("MCP" if mcp else "region", group["region"], group.get("role") or "-")
    what = "reachable" if mcp else "healthy"
    head = ["peer", "SRV target", "state", "RTT", "certificate expiry"] + ([] if mcp else ["SBC view"]) + ["detail"]
    rows = [_peer_row(p, None if mcp else sbc_peer_state(states, p)) for p in group["peers"]]
    dns = group["dns"]
    dns_text = "" if dns["ok"] else " &middot; DNS %s" % _e(dns.get("kind"))
    return ('<div class="group" data-region="%s" data-kind="%s"><h3>%s %s %d/%d %s%s</h3>'
            '<table><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>' % (
                _e(group["region"]), "mcp" if mcp else "sip", _e(title), _badge(group["verdict"]), group["healthy"],
                group["total"], what, dns_text, "".join("<th>%s</th>" % _e(h) for h in head),
                "".join(rows) or '<tr><td colspan="7">no peer</td></tr>'))


def _timeline(entries: t.Sequence[t.Mapping[str, t.Any]]) -> str:
    """One row for the site, one per region: a tick per probe run, oldest left."""
    if not entries:
        return '<p class="note">no probe run in the last hour</p>'
    rows = {"site": [(e["t"], e["verdict"], "") for e in entries]}
    for entry in entries:
        for region in entry["regions"]:
            rows.setdefault("region %s" % region["region"], []).append(
                (entry["t"], region["verdict"], " %d/%d healthy" % (region["healthy"], region["total"])))
    out = []
    for label, ticks in rows.items():
        cells = "".join('<span class="tick %s" title="%s %s%s"></span>' % (
            _e(v if v in ("pass", "warn", "fail") else "none"), _e(_time(at)), _e(v), _e(extra))
            for at, v, extra in ticks)
        out.append('<div class="timeline" aria-label="%s"><span class="label">%s</span>%s</div>' % (
            _e(label), _e(label), cells))
    return "".join(out)


def _site(name: str, run: t.Any, entries: t.Sequence[t.Mapping[str, t.Any]], verdict_of: t.Callable[..., str]
          ) -> str:
    if run is None or run.report is None:
        why = "no probe result yet" if run is None else "the last run failed: %s" % run.error
        return ('<section class="site" id="site-%s"><h2>%s %s</h2><p class="note">%s</p>%s</section>'
                % (_e(name), _e(name), _badge(None), _e(why), _timeline(entries)))
    report = run.report
    verdict = verdict_of(report)
    sbc = report.get("sbc_view") or {}
    states = sbc_peer_states(sbc)
    meta = "deployment %s &middot; SBC %s (%s) &middot; probed %s in %.1f s (module %s)" % (
        _e(report["deployment"]), _e(report.get("host") or "-"), _e(sbc.get("platform") or "no SBC view"),
        _e(_time(run.started_at)), run.duration_s or 0.0, _e(run.module))
    reasons = "".join("<li>%s</li>" % _e(r) for r in report.get("reasons") or [])
    groups = "".join(_group(g, states, False) for g in report["regions"])
    groups += "".join(_group(g, None, True) for g in report["mcp"])
    return ('<section class="site v-%s" id="site-%s" data-verdict="%s"><h2>%s %s</h2><p class="meta">%s</p>'
            '<ul class="reasons">%s</ul>%s<h3>last hour</h3>%s</section>' % (
                _e(verdict), _e(name), _e(verdict), _e(name), _badge(verdict), meta, reasons, groups,
                _timeline(entries)))


def render(sites: t.Sequence[str], runs: t.Mapping[str, t.Any], timelines: t.Mapping[str, t.Sequence[t.Any]],
           verdict_of: t.Mapping[str, t.Callable[..., str]], now: float, title: str = "ACG reachability") -> str:
    """The page; ``runs``: the latest run per site, ``timelines``: each site's history entries."""
    body = "".join(_site(name, runs.get(name), timelines.get(name) or [], verdict_of[name]) for name in sites)
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width, initial-scale=1"><title>%s</title><style>%s</style></head><body>'
            '<header><h1>%s</h1><p class="meta">commsgw-probe-exporter &middot; %s &middot; '
            '<span id="age" data-now="%d"></span> &middot; reloads every 30 s</p></header>%s'
            '<footer class="note">Peers: OPTIONS over mutual TLS from this host; MCP: reachability only. SBC view: '
            'the SBC\'s own state of each peer. Metrics: <a href="/metrics">/metrics</a>, '
            '/probe?target=&lt;site&gt;.</footer><script>%s</script></body></html>' % (
                _e(title), STYLE, _e(title), _e(_time(now)), int(now), body, SCRIPT))
