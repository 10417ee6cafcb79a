# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SRV refresher: keep an SBC's dispatcher.list in step with ACG's SRV records (R-10, R-11, R-23).

Kamailio cannot use ACG's ``_sip._tls`` SRV records itself (docs/kamailio-notes.md), so the records are
resolved at render time and this refresher, on the SBC host (``commsgw-srv-refresh``, a systemd timer or a
loop), re-resolves them at their TTL. Rules:

* refuse any answer with a target address outside the deployment's /28s (R-07): the whole answer of
  that record is ignored and its previous peers kept, since a partly foreign answer is suspect;
* rewrite dispatcher.list and call ``dispatcher.reload`` only when the resulting list differs from
  the file (a reload resets every peer's probing state, so a TTL-only change must not cause one);
* a failed lookup keeps the record's previous peers; the list is never written empty; every failure is
  logged; if the reload fails, the previous file is put back so that the next run tries again.

Input: a root-owned copy of ``commsgw-srv.json`` (``kamailio.srv_refresh_input``). The renderer's own row
functions build the list, so the refresher decides no routing; a change in the number of SRV priority tiers
needs other set ids in kamailio.cfg and is refused (previous peers kept) until the next push. Standard library
and dnspython only (the collection files it imports are shipped alongside); it writes only ``<config_dir>/peers``.
"""

from __future__ import annotations

import dataclasses
import grp
import hashlib
import json
import logging
import os
import stat
import typing as t

try:  # the collection's path first, then a plain import next to the installed script
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.rows import (  # type: ignore
        KamailioViewError, dispatcher_list_text, dispatcher_sets, mcp_dispatcher_sets)
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.runtime import (  # type: ignore
        DEFAULT_KAMAILIO_USER, JsonRpc, RpcEndpoints, RpcError, rpc_endpoints)
    from ansible_collections.commsgw.routing.plugins.module_utils.srv.lookup import (  # type: ignore
        RECORD_KINDS, DnsLookupError, ResolverSettings, SrvAnswer, SrvLimits, addresses_outside, canonical_targets,
        check_record, limits_for, resolve_srv, target_from_dict)
    from ansible_collections.commsgw.routing.plugins.module_utils.core.safe_files import write_text_atomic  # type: ignore
    from ansible_collections.commsgw.routing.plugins.module_utils.host.lease import unless_pushing  # type: ignore
    from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.refresher_health import (  # type: ignore
        STATE_NAME, note_run, stale)
except ImportError:  # pragma: no cover - on the SBC host
    from kamailio.rows import KamailioViewError, dispatcher_list_text, dispatcher_sets, mcp_dispatcher_sets  # type: ignore
    from kamailio.runtime import DEFAULT_KAMAILIO_USER, JsonRpc, RpcEndpoints, RpcError, rpc_endpoints  # type: ignore
    from srv.lookup import (  # type: ignore
        RECORD_KINDS, DnsLookupError, ResolverSettings, SrvAnswer, SrvLimits, addresses_outside, canonical_targets,
        check_record, limits_for, resolve_srv, target_from_dict)
    from core.safe_files import write_text_atomic  # type: ignore
    from host.lease import unless_pushing  # type: ignore
    from kamailio.refresher_health import STATE_NAME, note_run, stale  # type: ignore

LOG = logging.getLogger("commsgw-srv-refresh")
SCHEMA_VERSION = 1
MIN_TTL_S = 5        # never hammer the resolver, whatever the record says
MAX_TTL_S = 3600     # never go longer than an hour without a look (R-23: migrations)
RETRY_AFTER_FAILURE_S = 10


class RefreshError(Exception):
    """A lookup or an answer that cannot be used; the record keeps its previous peers."""


class RecordRefused(RefreshError):
    """An answer that breaks RFC 2782 or the spec's ``srv_limits`` (a name that is not a host name, a
    CNAME or '.' target, port 0 or an unexpected port, too many targets): refused, previous peers kept."""


class SpecPathError(ValueError):
    """A path the spec names that the refresher must not write or talk to; nothing is done."""


@dataclasses.dataclass
class Outcome:
    """What one refresh run did; ``errors`` are also logged."""

    resolved: list[str] = dataclasses.field(default_factory=list)
    refused: list[str] = dataclasses.field(default_factory=list)
    failed: list[str] = dataclasses.field(default_factory=list)
    written: bool = False
    reloaded: bool = False
    unsafe: list[str] = dataclasses.field(default_factory=list)  # paths refused at write time
    errors: list[str] = dataclasses.field(default_factory=list)
    next_due_s: float = float(MAX_TTL_S)
    skipped: str = ""  # why nothing was done: a push holds the SBC (push_lease, issue 21)
    stale: t.Optional[str] = None  # set when no good run for longer than max_age_s (see ``stale``)


# --- the input file

def load_spec(path: str, allowed_dirs: t.Sequence[str] = ()) -> dict[str, t.Any]:
    """Read commsgw-srv.json; a relative dispatcher_list is taken relative to the file.

    Every path the spec names must lie in the spec's own directory or in ``allowed_dirs`` (the run
    directory): a spec is data pushed from elsewhere, and the refresher must not become a way to
    write to, or send to, anything else on the host. Raises SpecPathError (a ValueError) otherwise.
    """
    with open(path, encoding="utf-8") as handle:
        spec = json.load(handle)
    if not isinstance(spec, dict) or spec.get("schema_version") != SCHEMA_VERSION:
        raise ValueError("%s: not a commsgw-srv.json of schema_version %d" % (path, SCHEMA_VERSION))
    for key in ("dispatcher_list", "transport", "acg_socket", "trunk_groups", "sets", "acl_ranges"):
        if key not in spec:
            raise ValueError("%s: missing %r" % (path, key))
    if not spec["trunk_groups"]:
        raise ValueError("%s: no trunk group" % path)
    try:
        spec_limits(spec)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValueError("%s: srv_limits %r is not {max_targets: N, ports: [N, ...]} (%s)"
                         % (path, spec.get("srv_limits"), exc))
    spec = dict(spec)
    spec["_digest"] = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    spec["_path"] = os.path.abspath(path)
    spec["_allowed_dirs"] = [os.path.realpath(d) for d in [os.path.dirname(spec["_path"]), *allowed_dirs]]
    spec["dispatcher_list"] = os.path.join(os.path.dirname(spec["_path"]), spec["dispatcher_list"])
    for key in ("dispatcher_list", "rpc_socket", "rpc_fifo"):
        if spec.get(key):
            check_path(spec, key, spec[key])
    check_regular(spec["dispatcher_list"])
    return spec


def check_path(spec: t.Mapping[str, t.Any], what: str, path: t.Any) -> None:
    """Refuse ``path`` unless it is absolute, has no '..' and, symlinks resolved, lies inside an allowed dir."""
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        raise SpecPathError("%s: %s %r is not an absolute path" % (spec["_path"], what, path))
    if ".." in path.split("/"):
        raise SpecPathError("%s: %s %s contains '..'" % (spec["_path"], what, path))
    real = os.path.realpath(path)
    if not any(real.startswith(d.rstrip("/") + "/") for d in spec["_allowed_dirs"]):
        raise SpecPathError("%s: %s %s%s is outside the allowed directories (%s)" % (
            spec["_path"], what, path, "" if real == path else " (really %s)" % real,
            ", ".join(spec["_allowed_dirs"])))


def check_regular(path: str) -> None:
    """dispatcher.list is replaced by rename: refuse to replace anything but a regular file (no symlink)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise SpecPathError("%s is not a regular file (symlinks are refused); left as it is" % path)


def group_id(name: str) -> int:
    """A group name or number (--file-group) this process may give its files; ValueError up front otherwise."""
    try:
        gid = int(name) if name.isascii() and name.isdigit() else grp.getgrnam(name).gr_gid
    except KeyError:
        raise ValueError("no group %r" % name)
    if os.geteuid() != 0 and gid != os.getegid() and gid not in os.getgroups():
        raise ValueError("cannot give files group %s: not a member (SupplementaryGroups=?)" % name)
    return gid


# --- DNS

def spec_limits(spec: t.Mapping[str, t.Any]) -> SrvLimits:
    """The bounds the spec's records are held to (``srv_limits``; a spec without: the transport's defaults)."""
    return limits_for(spec["transport"], spec.get("srv_limits"))


def resolve(name: str, settings: ResolverSettings, limits: t.Optional[SrvLimits] = None) -> SrvAnswer:
    """The record and its targets' addresses, via the lookup the controller uses; raises RefreshError
    (RecordRefused for an answer that breaks RFC 2782 or ``limits``).

    Stricter than the audit: a target without an IPv4 address makes the whole answer unusable here,
    since writing a peer list without it would silently drop a peer.
    """
    try:
        answer = resolve_srv(name, settings, limits)
    except DnsLookupError as exc:
        if exc.kind in RECORD_KINDS:
            raise RecordRefused("%s [%s]; refused, previous peers kept" % (exc, exc.kind))
        raise RefreshError("%s [%s]" % (exc, exc.kind))
    unresolved = [target.target for target in answer.targets if not target.addresses]
    if unresolved:
        raise RefreshError("SRV %s: target(s) without an IPv4 address: %s" % (name, ", ".join(unresolved)))
    return answer


def _check_answer(name: str, answer: SrvAnswer, limits: SrvLimits) -> None:
    """The lookup's RFC 2782 / ``limits`` checks once more on whatever ``resolve_fn`` returned."""
    rows = [(tgt.priority, tgt.weight, tgt.port, tgt.target) for tgt in answer.targets]
    try:
        check_record(name, "the fresh answer", rows, limits)
    except DnsLookupError as exc:
        raise RecordRefused("%s [%s]; refused, previous peers kept" % (exc, exc.kind))


def outside(answer: SrvAnswer, ranges: t.Sequence[str]) -> list[str]:
    """Every address of the answer that lies in none of ``ranges`` (the deployment's /28s)."""
    return ["%s (%s)" % (address, target.target) for target, address in addresses_outside(answer.targets, ranges)]


# --- dispatcher.list, built by the renderer's own functions

def group_with(group: t.Mapping[str, t.Any], answer: SrvAnswer) -> dict[str, t.Any]:
    """A plan trunk group (as far as dispatcher_sets reads it) carrying ``answer``'s peers."""
    return dict(group, peers=[target.as_dict() for target in canonical_targets(answer.targets)])


def build(spec: t.Mapping[str, t.Any], answers: t.Mapping[str, SrvAnswer]) -> tuple[list[dict[str, t.Any]], str]:
    groups = [group_with(g, answers[g["srv_name"]]) for g in spec["trunk_groups"]]
    sets = dispatcher_sets(groups, spec["acg_socket"], spec["transport"])
    # MCP records (docs/mcp.md): their rows follow the trunk groups' and are never probed.
    mcp = [group_with(g, answers[g["srv_name"]]) for g in spec.get("mcp_records") or []]
    sets += mcp_dispatcher_sets(mcp, spec["acg_socket"], spec["transport"])
    return sets, dispatcher_list_text(sets)


def records(spec: t.Mapping[str, t.Any]) -> list[t.Mapping[str, t.Any]]:
    """Every SRV record the list is built from: trunk groups, then MCP records (when the spec has any)."""
    return list(spec["trunk_groups"]) + list(spec.get("mcp_records") or [])


# --- state between runs (last good answer and when to look again, per record)

def _state_path(spec: t.Mapping[str, t.Any], state_dir: t.Optional[str]) -> str:
    return os.path.join(state_dir or os.path.dirname(spec["_path"]), STATE_NAME)


def load_state(spec: t.Mapping[str, t.Any], state_dir: t.Optional[str]) -> dict[str, t.Any]:
    try:
        with open(_state_path(spec, state_dir), encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        state = {}
    if not isinstance(state, dict):
        state = {}
    # A new push (another spec) starts afresh: its dispatcher.list is the render-time truth. The run
    # history (``health``) carries over: a refresher failing across pushes is still failing.
    if state.get("digest") != spec["_digest"]:
        state = {"digest": spec["_digest"], "records": {}, "health": state.get("health")}
    if not isinstance(state.get("health"), dict):
        state["health"] = {}
    return state


def save_state(spec: t.Mapping[str, t.Any], state_dir: t.Optional[str], state: t.Mapping[str, t.Any],
               file_gid: t.Optional[int] = None) -> None:
    _atomic_write(_state_path(spec, state_dir), json.dumps(state, sort_keys=True, indent=1) + "\n", file_gid)


def _atomic_write(path: str, text: str, file_gid: t.Optional[int] = None) -> None:
    """Replace ``path`` in one step (``safe_files.write_text_atomic``: temp file + rename in its directory).

    With ``file_gid`` (the unprivileged unit): group ``file_gid``, mode 0640, so Kamailio reads it through
    its group and nobody else does. Without (root, process mode): the previous file's mode and owner.
    """
    write_text_atomic(path, text, 0o640 if file_gid is not None else 0o644, None, group=file_gid,
                      keep_existing=True, umask=False, prefix=".commsgw-")


def _read(path: str) -> t.Optional[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


# --- one run

Resolve = t.Callable[[str], SrvAnswer]
Reload = t.Callable[[], None]


def _fail(outcome: Outcome, message: str) -> None:
    outcome.errors.append(message)
    LOG.error("%s", message)


@unless_pushing(lambda why: Outcome(skipped=why, next_due_s=float(RETRY_AFTER_FAILURE_S)))
def refresh(spec: t.Mapping[str, t.Any], resolve_fn: Resolve, reload_fn: Reload, now: float,
            force: bool = False, state_dir: t.Optional[str] = None, file_gid: t.Optional[int] = None,
            max_age_s: float = MAX_TTL_S) -> Outcome:
    """Re-resolve the records that are due; rewrite dispatcher.list and reload only on a real change.

    The file is only (re)built when every record has a usable answer, fresh or kept from an earlier
    run; until then the rendered file stays as it is.
    """
    outcome = Outcome()
    state = load_state(spec, state_dir)
    answers: dict[str, SrvAnswer] = {}
    for group in records(spec):
        name = group["srv_name"]
        saved = state["records"].get(name)
        if saved:
            answers[name] = SrvAnswer(name, int(saved["ttl"]), tuple(target_from_dict(p) for p in saved["peers"]))
        due = float(saved["next_due"]) if saved else 0.0
        if not force and now < due:
            outcome.next_due_s = min(outcome.next_due_s, due - now)
            continue
        try:
            fresh = resolve_fn(name)
            _check_answer(name, fresh, spec_limits(spec))
            # The region's own /28s when the spec has them, else every /28 of the deployment.
            ranges = group.get("ip_ranges") or spec["acl_ranges"]
            bad = outside(fresh, ranges)
            if bad:
                outcome.refused.append(name)
                raise RefreshError("SRV %s: refused, targets outside %s: %s; previous peers kept"
                                   % (name, ", ".join(ranges), ", ".join(bad)))
            answers[name] = fresh
            outcome.resolved.append(name)
            wait = float(max(MIN_TTL_S, min(MAX_TTL_S, fresh.ttl)))
            state["records"][name] = {"ttl": fresh.ttl,
                                      "peers": [p.as_dict() for p in canonical_targets(fresh.targets)],
                                      "next_due": now + wait}
        except RefreshError as exc:
            if isinstance(exc, RecordRefused) and name not in outcome.refused:
                outcome.refused.append(name)
            if name not in outcome.refused:
                outcome.failed.append(name)
            _fail(outcome, str(exc))
            wait = float(RETRY_AFTER_FAILURE_S)
            if saved:
                saved["next_due"] = now + wait
        outcome.next_due_s = min(outcome.next_due_s, wait)
    missing = [g["srv_name"] for g in records(spec) if g["srv_name"] not in answers]
    if missing:
        _fail(outcome, "no usable answer yet for %s; %s left as rendered" % (", ".join(missing),
                                                                             spec["dispatcher_list"]))
    else:
        _apply(spec, answers, reload_fn, now, state, outcome, file_gid)
    outcome.stale = stale(note_run(state, outcome, now, max_age_s), now)
    save_state(spec, state_dir, state, file_gid)
    return outcome


def _apply(spec: t.Mapping[str, t.Any], answers: t.Mapping[str, SrvAnswer], reload_fn: Reload, now: float,
           state: dict[str, t.Any], outcome: Outcome, file_gid: t.Optional[int] = None) -> None:
    path = spec["dispatcher_list"]
    try:
        sets, text = build(spec, answers)
    except (KamailioViewError, ValueError) as exc:
        _fail(outcome, "cannot build the peer list (%s); %s left as it is" % (exc, path))
        return
    expected_ids = sorted(int(s["id"]) for s in list(spec["sets"]) + list(spec.get("mcp_sets") or []))
    new_ids = sorted(int(s["id"]) for s in sets)
    if new_ids != expected_ids:
        # kamailio.cfg routes over the rendered set ids; other ids need a re-render, not a reload.
        _fail(outcome, "the SRV priority tiers changed (dispatcher sets %s, kamailio.cfg routes over %s); %s left "
                       "as it is: render and push the configuration again" % (new_ids, expected_ids, path))
        return
    if not any(s["destinations"] for s in sets):
        _fail(outcome, "the new peer list would be empty; %s left as it is" % path)
        return
    try:
        check_regular(path)  # again, right before the write: the file may have changed since load_spec
    except SpecPathError as exc:
        outcome.unsafe.append(path)
        _fail(outcome, str(exc))
        return
    current = _read(path)
    if text == current:
        return
    _atomic_write(path, text, file_gid)
    outcome.written = True
    try:
        reload_fn()
    except (RpcError, OSError) as exc:
        # Put the old file back so that the next run sees the difference again and retries.
        if current is not None:
            _atomic_write(path, current, file_gid)
        outcome.written = False
        _fail(outcome, "dispatcher.reload failed (%s); previous %s restored, retry in %d s"
              % (exc, path, RETRY_AFTER_FAILURE_S))
        for name in answers:
            if name in state["records"]:
                state["records"][name]["next_due"] = now + RETRY_AFTER_FAILURE_S
        return
    outcome.reloaded = True
    LOG.warning("peer list changed (%s): %s rewritten and dispatcher reloaded", ", ".join(outcome.resolved), path)


def rpc_for(spec: t.Mapping[str, t.Any], timeout_s: float = 5.0,
            kamailio_user: t.Union[str, int, None] = DEFAULT_KAMAILIO_USER) -> JsonRpc:
    """The jsonrpcs client of the Kamailio this spec belongs to (from the spec, else from kamailio.cfg), taking
    answers from ``kamailio_user`` (the configured account) or root only.

    Endpoints taken from kamailio.cfg are held to the same allowed directories as the spec's own.
    """
    if spec.get("rpc_socket") or spec.get("rpc_fifo"):
        return JsonRpc(RpcEndpoints(spec.get("rpc_socket"), spec.get("rpc_fifo")), timeout_s, kamailio_user)
    cfg = os.path.join(os.path.dirname(spec["_path"]), "kamailio.cfg")
    endpoints = rpc_endpoints(_read(cfg) or "")
    if "_allowed_dirs" in spec:
        for what, path in (("kamailio.cfg's jsonrpcs socket", endpoints.socket),
                           ("kamailio.cfg's jsonrpcs FIFO", endpoints.fifo)):
            if path:
                check_path(spec, what, path)
    return JsonRpc(endpoints, timeout_s, kamailio_user)
