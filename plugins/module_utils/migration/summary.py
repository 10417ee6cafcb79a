# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Region migration (R-23) for humans: the semantic difference (``migration.semantic``) as short lines,
and the unified diff of each rendered artefact against the deployed one."""

from __future__ import annotations

import difflib
import typing as t


def summary_lines(diff: t.Mapping[str, t.Any], site: str = "") -> list[str]:
    """The semantic difference as short lines for humans (one fact per line)."""
    prefix = "%s: " % site if site else ""
    if not diff["onboarded"]:
        return [prefix + "no configuration deployed yet (first onboarding): regions %s, ACL %s"
                % (", ".join(diff["regions_added"]), ", ".join(diff["acl"]["added"]))]
    if not diff["changes"]:
        return [prefix + "no routing change"]
    lines = []
    for key, label in (("deployment", "deployment"), ("type", "deployment type"), ("transport", "transport")):
        if diff[key]:
            lines.append("%s%s %s -> %s" % (prefix, label, diff[key]["before"], diff[key]["after"]))
    if diff["pairing"]:
        lines.append("%ssite re-paired: local region %s -> %s" % (prefix, diff["pairing"]["before"],
                                                                  diff["pairing"]["after"]))
    for region in diff["regions"]:
        name = region["region"]
        if region["status"] != "kept":
            lines.append("%sregion %s %s" % (prefix, name, region["status"]))
        for key in ("hostname", "srv_name", "role"):
            if region[key] and region["status"] == "kept":
                change = region[key]
                lines.append("%sregion %s %s %s -> %s" % (prefix, name, key, change["before"], change["after"]))
        for key, label in (("ranges_added", "/28 added"), ("ranges_removed", "/28 removed"),
                           ("targets_gained", "SRV target gained"), ("targets_lost", "SRV target lost"),
                           ("targets_reweighted", "SRV target re-weighted")):
            for value in region[key]:
                lines.append("%sregion %s %s: %s" % (prefix, name, label, value))
    for entry in diff.get("mcp") or []:
        if entry["hostname"]:
            lines.append("%sMCP region %s hostname %s -> %s" % (prefix, entry["region"], entry["hostname"]["before"],
                                                                entry["hostname"]["after"]))
        for key, label in (("targets_gained", "target gained"), ("targets_lost", "target lost")):
            for value in entry[key]:
                lines.append("%sMCP region %s %s: %s" % (prefix, entry["region"], label, value))
    for value in diff["acl"]["added"]:
        lines.append("%sACL admits %s" % (prefix, value))
    for value in diff["acl"]["removed"]:
        lines.append("%sACL no longer admits %s" % (prefix, value))
    for key, change in sorted((diff["tls"] or {}).items()):
        lines.append("%scertificate %s %s -> %s" % (prefix, key, change["before"] or "-", change["after"] or "-"))
    return lines


def artefact_diffs(current: t.Mapping[str, t.Optional[str]], new: t.Mapping[str, str],
                   path_of: t.Callable[[str], str]) -> dict[str, str]:
    """Unified diff of every rendered artefact that differs from the deployed one; ``path_of(name)`` names the
    deployed artefact (the platform's ``artefact_path``)."""
    diffs = {}
    for name in sorted(new):
        before = current.get(name)
        if before == new[name]:
            continue
        path = path_of(name)
        lines = difflib.unified_diff((before or "").splitlines(True), new[name].splitlines(True),
                                     fromfile=path + (" (deployed)" if before is not None else " (absent)"),
                                     tofile=path + " (new)")
        diffs[name] = "".join(lines)
    return diffs
