# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The digest of everything the controller gives one Kamailio push (issue 25 item 2, ``kamailio.converged``).

A push whose input digest is the one recorded after the last complete push, on a host that is as recorded,
has nothing to do. The input is: the rendered files; every variable the role's push reads (its ``kamailio_*``
variables and ``commsgw_sbc``, templated, as the role passes them); and the collection's own code (its
plugins and roles, so that an upgraded collection pushes again: a new module, template or refresher may
change what a push does with the same files). Variables that describe one run rather than the push (the
plan, the read-back, results registered by an earlier push in the same play) are left out by the role.
"""

from __future__ import annotations

import hashlib
import json
import os
import typing as t

_CODE_DIRS = ("plugins", "roles")
_code_digests: dict[str, str] = {}


def code_digest(collection_root: str) -> str:
    """sha256 over the path and content of every file under the collection's plugins/ and roles/ (byte code
    left out); computed once per process."""
    if collection_root in _code_digests:
        return _code_digests[collection_root]
    digest = hashlib.sha256()
    for top in _CODE_DIRS:
        for directory, subdirs, files in sorted(os.walk(os.path.join(collection_root, top))):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(directory, name)
                digest.update(os.path.relpath(path, collection_root).encode("utf-8", "surrogateescape") + b"\0")
                with open(path, "rb") as handle:
                    digest.update(hashlib.sha256(handle.read()).digest())
    _code_digests[collection_root] = digest.hexdigest()
    return _code_digests[collection_root]


def input_digest(files: t.Mapping[str, t.Any], variables: t.Mapping[str, t.Any], code: str) -> str:
    """sha256 of the rendered ``files``, the push's ``variables`` and the ``code`` digest, in one canonical JSON."""
    canonical = json.dumps({"files": files, "variables": variables, "code": code},
                           sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()
