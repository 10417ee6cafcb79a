# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a compromised SRV refresher would try (issue 21 item 2), run as the refresher's user.

A standalone script (standard library only): the tests run it as the refresher's uid and groups with
``setpriv`` (the file layout alone) and inside the refresher's own systemd unit (layout plus sandbox), on the
test machine and on the production-shaped hosts. It prints one JSON object, attack -> "succeeded" or the
error it met, and always exits 0.

    python3 refresher_attacks.py --config-dir /etc/kamailio --key /etc/kamailio/tls/sbc.key \\
        --spec /etc/commsgw-srv-refresh/commsgw-srv.json --run-dir /run/kamailio [--undo]

``--undo`` puts back what can be put back after an attack that succeeded (the tls/ swap, the files it
created), so that a host the attacks succeed on (the old layout) stays usable; a file renamed over stays
replaced.
"""

from __future__ import annotations

import argparse
import json
import os
import typing as t

PAYLOAD = 'loadmodule "exec.so"\n'  # what an attacker would put into kamailio.cfg: command execution as Kamailio


def _replace(directory: str, name: str) -> t.Callable[[], None]:
    """Replace ``directory/name`` by a rename of a file written next to it (the only write a rename needs)."""
    def act() -> None:
        tmp = os.path.join(directory, ".commsgw-attack")
        with open(tmp, "w") as handle:
            handle.write(PAYLOAD)
        os.rename(tmp, os.path.join(directory, name))
    return act


def _create(path: str, undo: bool) -> t.Callable[[], None]:
    def act() -> None:
        with open(path, "x") as handle:
            handle.write(PAYLOAD)
        if undo:
            os.unlink(path)
    return act


def _swap(path: str, undo: bool) -> t.Callable[[], None]:
    def act() -> None:
        os.rename(path, path + ".old")
        if undo:
            os.rename(path + ".old", path)
    return act


def _read(path: str) -> t.Callable[[], None]:
    def act() -> None:
        with open(path) as handle:
            handle.read()
    return act


def attacks(config_dir: str, key: str, spec: str, run_dir: str, undo: bool) -> dict[str, t.Callable[[], None]]:
    return {
        "rename over kamailio.cfg": _replace(config_dir, "kamailio.cfg"),
        "rename over tls.cfg": _replace(config_dir, "tls.cfg"),
        "read the private key": _read(key),
        "swap tls/": _swap(os.path.join(config_dir, "tls"), undo),
        "chmod the config dir": lambda: os.chmod(config_dir, 0o777),
        "replace its own input": _replace(os.path.dirname(spec), os.path.basename(spec)),
        "create a file in the config dir": _create(os.path.join(config_dir, "commsgw-attack.cfg"), undo),
        "create a file in Kamailio's run dir": _create(os.path.join(run_dir, "commsgw-attack"), undo),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--config-dir", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--undo", action="store_true")
    args = parser.parse_args()
    outcome = {}
    for name, act in attacks(args.config_dir, args.key, args.spec, args.run_dir, args.undo).items():
        try:
            act()
            outcome[name] = "succeeded"
        except OSError as exc:
            outcome[name] = exc.strerror or str(exc)
    print("commsgw-attacks " + json.dumps(outcome, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
