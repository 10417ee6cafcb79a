# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SRV answers a routing plan is built from, checked as a live lookup checks them.

Passed-in answers (``routing_plan``'s ``resolved``) and recorded ones (``srv_answers``, see
``srv.recorded``) get the same checks as the SRV audit's own lookup: RFC 2782 and srv_limits
(``srv_bounds.resolved_problems``) and R-07 (``srv.audit_srv``: every address in the region's
ranges). Recorded answers must also cover every record the deployment uses: a plan built from a
recording never falls back to DNS.
"""

from __future__ import annotations

import datetime
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.inventory.model import Deployment
from ansible_collections.commsgw.routing.plugins.module_utils.srv.recorded import Recording
from ansible_collections.commsgw.routing.plugins.module_utils.srv.deployment import audit_srv, deployment_records
from ansible_collections.commsgw.routing.plugins.module_utils.srv.bounds import resolved_problems


def answer_problems(deployment: Deployment, resolved: t.Mapping[str, t.Any],
                    recorded: t.Optional[t.Mapping[str, Recording]] = None, recorded_from: str = "") -> list[str]:
    """Why the answers cannot be this deployment's peers; with ``recorded`` (read from ``recorded_from``)
    every problem names the file and the path inside it, and a missing record is one."""
    def origin(name: str) -> str:
        if recorded is not None and name in recorded:
            return "%s: %s: " % (recorded[name].source, recorded[name].where)
        return ""

    problems = []
    for line in resolved_problems(deployment, resolved):
        name = line[len("resolved["):line.index("]")] if line.startswith("resolved[") else ""
        problems.append(origin(name) + line)
    if problems:
        return problems
    for name, path, ranges in deployment_records(deployment):
        answer = resolved.get(name)
        if answer is None:
            if recorded is not None:
                problems.append("%s: no recorded SRV answer for %s (needed for commsgw_deployment.%s) in %s"
                                % (name, name, path, recorded_from))
            continue
        problems.extend(origin(name) + finding.render() for finding in audit_srv(answer, ranges, path))
    return problems


def used_recordings(deployments: t.Iterable[Deployment], recorded: t.Mapping[str, Recording],
                    now: datetime.datetime, max_age_s: int) -> tuple[list[dict[str, t.Any]], list[str]]:
    """(which recorded answers the plans use, with source and age; a warning per answer older than
    ``max_age_s``)."""
    names = sorted({name for deployment in deployments for name, _path, _ranges in deployment_records(deployment)
                    if name in recorded})
    used = [recorded[name].describe(now) for name in names]
    stale = ["recorded SRV answer %s from %s is %s old (recorded at %s, from its %s), older than "
             "srv_answers_max_age (%d s): resolve again before pushing this render"
             % (entry["srv_name"], entry["source"], entry["age"], entry["recorded_at"], entry["recorded_at_from"],
                max_age_s) for entry in used if entry["age_s"] > max_age_s]
    return used, stale


def used_lines(used: t.Iterable[t.Mapping[str, t.Any]]) -> list[str]:
    """One readable line per recorded answer used."""
    return ["%s from %s (%s), recorded at %s, %s ago" % (entry["srv_name"], entry["source"], entry["where"],
                                                         entry["recorded_at"], entry["age"]) for entry in used]
