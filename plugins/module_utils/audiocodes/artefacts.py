# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Mediant's artefacts as the platform contract carries them (``{name: text}``), and back.

``commsgw.ini``      the rows this collection owns, as the device's ini tables (``GET /api/v1/files/ini`` gives
                     the same tables; the push and the read-back compare in these terms). A comment header
                     names what the device does not hold: the deployment, site, type and transport the rows
                     were rendered for, the first owned row index, and the plan facts the device cannot
                     enforce as the plan says (``gaps``, each with its requirement).
``incremental.cli``  the incremental CLI script that creates those rows on a device holding none of them (for an
                     operator to read or paste; the push computes the script from what the device holds).

The device's side of the same names (``deployed``) is what it holds now, in the same form: its rows of ours as
ini tables under the header of the identity the inventory gives it, and the script that would create them. A
textual diff of rendered against deployed is a diff of rows.
"""

from __future__ import annotations

import json
import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes import ini, readback
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.render import Artefacts, render
from ansible_collections.commsgw.routing.plugins.module_utils.audiocodes.rows import (
    RenderError, Rows, change_script, empty_rows, owned_rows)

INI = "commsgw.ini"
CLI = "incremental.cli"
NAMES = (INI, CLI)
_HEADER = "; commsgw.routing "  # then a JSON object on the same line
_GAP = "; gap "


def renderer_settings(settings: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The host's validated ``commsgw_sbc`` as ``render.render`` reads it: the core Proxy Set's transport is the
    common key ``core_listen.transport``."""
    raw = dict(settings)
    raw.setdefault("core_transport", (settings.get("core_listen") or {}).get("transport") or "udp")
    raw.setdefault("base", "hosts[%s].commsgw_sbc" % settings["host"] if settings.get("host") else "commsgw_sbc")
    return raw


def header(identity: t.Mapping[str, t.Any], index_base: int, gaps: t.Sequence[t.Mapping[str, str]] = ()) -> str:
    meta = {key: identity.get(key) for key in ("deployment", "site", "type", "transport")}
    meta["index_base"] = int(index_base)
    lines = [_HEADER + json.dumps(meta, sort_keys=True),
             "; the rows commsgw.routing owns on this Mediant (docs/platforms/audiocodes.md)"]
    lines += [_GAP + "%s %s: %s" % (g["requirement"], g["field"], g["gap"]) for g in gaps]
    return "\n".join(lines) + "\n"


def to_texts(artefacts: Artefacts) -> dict[str, str]:
    return {INI: header(artefacts.identity, artefacts.index_base, artefacts.gaps) + artefacts.ini,
            CLI: artefacts.cli}


def render_artefacts(plan: t.Mapping[str, t.Any], settings: t.Mapping[str, t.Any], host: t.Optional[str] = None,
                     **_options: t.Any) -> dict[str, str]:
    """The contract's renderer: ``{commsgw.ini, incremental.cli}`` for ``plan`` (RenderError names a field)."""
    raw = renderer_settings(dict(settings, host=host or settings.get("host")))
    return to_texts(render(plan, raw))


def meta(text: t.Optional[str]) -> t.Optional[dict[str, t.Any]]:
    """The header of a ``commsgw.ini`` text (None: not ours, or no header)."""
    for line in (text or "").splitlines():
        if line.startswith(_HEADER):
            try:
                value = json.loads(line[len(_HEADER):])
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def gaps(text: t.Optional[str]) -> list[str]:
    return [line[len(_GAP):] for line in (text or "").splitlines() if line.startswith(_GAP)]


def from_texts(texts: t.Mapping[str, t.Optional[str]]) -> t.Optional[Artefacts]:
    """Rendered texts back to ``render.Artefacts`` (what the push applies); None without a ``commsgw.ini``."""
    text = texts.get(INI)
    found = meta(text)
    if text is None or found is None:
        return None
    base = int(found.get("index_base") or 0)
    rows = owned_rows(ini.rows_from_ini(text), base)
    identity = {key: found.get(key) for key in ("deployment", "site", "type", "transport")}
    script, _steps = change_script(empty_rows(), rows)
    return Artefacts(rows=rows, cli=script, ini=ini.ini_from_rows(rows), identity=identity, index_base=base,
                     gaps=tuple(_gap(line) for line in gaps(text)))


def _gap(line: str) -> dict[str, str]:
    """``R-24 trunk_groups[].tls.sni: why`` (a header line) as the renderer's gap."""
    requirement, _space, rest = line.partition(" ")
    field, _sep, gap = rest.partition(": ")
    return {"requirement": requirement, "field": field, "gap": gap}


def has_rows(rows: Rows) -> bool:
    return any(rows[key] for key in rows if key != "sip_interface")


def texts_of_rows(rows: Rows, identity: t.Mapping[str, t.Any], index_base: int) -> dict[str, str]:
    """Our rows on a device as the artefacts' texts (the header names the identity the inventory gives it)."""
    script, _steps = change_script(empty_rows(), rows)
    return {INI: header(identity, index_base) + ini.ini_from_rows(rows), CLI: script}


def deployed_texts(device_ini: str, identity: t.Mapping[str, t.Any], index_base: int) -> dict[str, t.Optional[str]]:
    """What the device holds, as the artefacts' names: None for both when it holds no row of ours."""
    rows = owned_rows(ini.rows_from_ini(device_ini), index_base)
    if not has_rows(rows):
        return {INI: None, CLI: None}
    return dict(texts_of_rows(rows, identity, index_base))


def state_from_texts(texts: t.Mapping[str, t.Optional[str]]) -> t.Optional[dict[str, t.Any]]:
    """The neutral state (sbc.readback) of rendered or deployed artefacts; None when they hold no row of ours."""
    artefacts = from_texts(texts)
    if artefacts is None or not has_rows(artefacts.rows):
        return None
    return readback.state_from_rows(artefacts.rows, artefacts.identity)


__all__ = ["CLI", "INI", "NAMES", "RenderError", "deployed_texts", "from_texts", "header", "meta", "render_artefacts",
           "renderer_settings", "state_from_texts", "texts_of_rows", "to_texts"]
