# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 11 item 6: Ansible conventions of the collection's role and playbooks.

* every commsgw.routing.kamailio_service task of the role takes its shared arguments from one
  module_defaults entry (roles/kamailio/vars/main.yml): the rollback restart of migrate.yml once had its
  own copy that ran the host binary instead of the rootfs wrapper and Kamailio as root (no ``user``);
* meta/runtime.yml action_groups name real modules;
* every entry point the playbooks, the role and the tests use (tasks_from) has a role argument spec.
"""

from __future__ import annotations

import json
import os
import re
import sys
import typing as t
from pathlib import Path

import pytest
import yaml

from tests.harness.tools import module_docs, play

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "kamailio"
SERVICE = "commsgw.routing.kamailio_service"
# What a single call may still say itself: the wanted state and, for reloads, the methods.
PER_CALL = {"state", "reload"}


def _tasks(items: t.Any, inherited: t.Mapping[str, t.Any]) -> t.Iterator[tuple[dict[str, t.Any], dict[str, t.Any]]]:
    """(task, module_defaults in force) for every task, blocks/rescue/always walked."""
    for item in items or []:
        defaults = dict(inherited)
        defaults.update(item.get("module_defaults") or {})
        if "block" in item:
            for key in ("block", "rescue", "always"):
                yield from _tasks(item.get(key), defaults)
        else:
            yield item, defaults


def _service_tasks() -> list[tuple[str, dict[str, t.Any], dict[str, t.Any]]]:
    found = []
    for path in sorted((ROLE / "tasks").glob("*.yml")):
        for task, defaults in _tasks(yaml.safe_load(path.read_text()), {}):
            if SERVICE in task:
                found.append((path.name, task, defaults))
    return found


def _spec_options() -> set[str]:
    """kamailio_service's option names as ansible-doc shows them (documentation fragments merged)."""
    return set(module_docs("kamailio_service")["kamailio_service"]["options"])


def test_every_kamailio_service_call_takes_the_shared_arguments_from_module_defaults() -> None:
    calls = _service_tasks()
    assert len(calls) >= 6, calls
    for name, task, defaults in calls:
        own = set(task[SERVICE] or {})
        assert own <= PER_CALL, "%s: task %r passes %s itself; shared arguments belong in kamailio_service_defaults" % (
            name, task["name"], sorted(own - PER_CALL))
        assert defaults.get(SERVICE) == "{{ kamailio_service_defaults }}", (name, task["name"])


def test_the_shared_arguments_cover_every_option_the_role_controls() -> None:
    shared = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["kamailio_service_defaults"]
    options = _spec_options()
    assert set(shared) <= options, sorted(set(shared) - options)
    # Only the per-call options, the systemd unit name (the role uses Debian's), the push state directory
    # (every module derives the same one from the configuration directory) and the memory manager (the configuration
    # started names it: a rollback starts the previous one under its own) are left to the module.
    assert options - set(shared) - PER_CALL == {"service", "state_dir", "memory_manager"}
    assert shared["binary"] == "{{ kamailio_command }}", "the rootfs wrapper, not the host binary"
    assert shared["run_as_user"] == "{{ kamailio_user }}"


def test_action_groups_name_existing_modules() -> None:
    groups = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["action_groups"]
    modules = {p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if p.stem != "__init__"}
    assert {"kamailio", "sbc", "inventory"} <= set(groups)
    for group, members in groups.items():
        names = [m for m in members if isinstance(m, str)]
        assert names and set(names) <= modules, (group, sorted(set(names) - modules))


def _entry_points_used() -> set[str]:
    used = {"main"}
    for path in list(REPO.glob("playbooks/**/*.yml")) + list(REPO.glob("roles/**/*.yml")) + list(
            REPO.glob("extensions/**/*.yml")) + list((REPO / "tests").glob("*/*.py")):
        used |= set(re.findall(r"""tasks_from["']?\s*[:=]\s*["']?([A-Za-z0-9_]+)""", path.read_text()))
    return used


def test_every_entry_point_in_use_has_an_argument_spec() -> None:
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    used = _entry_points_used()
    # The playbooks include the platform role's entry points (docs/platforms.md), the tests the role itself.
    assert {"main", "render", "settle", "rollback", "hold", "release"} <= used
    assert used <= set(specs), "entry points without a spec: %s" % sorted(used - set(specs))
    for name in used:
        assert (ROLE / "tasks" / ("%s.yml" % name)).exists(), name
        assert specs[name].get("options"), name
    assert specs["render"]["options"]["kamailio_plan"]["required"] is True


# Issue 25 item 2: a re-run skips the push when kamailio_converged finds every managed path as the last push
# recorded it. A path the push writes that is not fingerprinted would let a hand edit there go unrepaired.
_PATH_MODULES = {"ansible.builtin.file": "path", "ansible.builtin.copy": "dest", "ansible.builtin.template": "dest",
                 "commsgw.routing.sbc_program_files": "dir"}
_PUSH_TASK_FILES = ("push.yml", "refresher.yml", "refresher_account.yml")


def _role_variables(manager: str, rootfs: str) -> dict[str, t.Any]:
    variables: dict[str, t.Any] = {}
    for path in (ROLE / "defaults" / "main.yml", ROLE / "vars" / "main.yml"):
        variables.update(yaml.safe_load(path.read_text()))
    variables.update({
        "commsgw_sbc": {"config_dir": "/srv/sbc/etc", "tls": {"certificate": "/srv/pki/sbc.pem",
                                                              "private_key": "/srv/pki/sbc.key",
                                                              "ca_bundle": "/srv/pki/ca.pem"}},
        "commsgw_sbc_artefacts": {"kamailio.cfg": "shm_mem_size=256\n", "commsgw-srv.json": "{}", "tls.cfg": ""},
        "kamailio_service_manager": manager, "kamailio_rootfs": rootfs, "kamailio_tls_chain_ca": "/srv/pki/root.pem",
        "ansible_check_mode": False})
    return variables


def _guarded_tasks(items: t.Any, inherited: t.Sequence[t.Any]) -> t.Iterator[tuple[dict[str, t.Any], list[t.Any]]]:
    """(task, every ``when`` condition over it, its blocks' included) for every task."""
    for item in items or []:
        when = item.get("when", [])
        conditions = list(inherited) + (when if isinstance(when, list) else [when])
        if "block" in item:
            for key in ("block", "rescue", "always"):
                yield from _guarded_tasks(item.get(key), conditions)
        else:
            yield item, conditions


def _covered(path: str, args: t.Mapping[str, t.Any]) -> bool:
    if path in args["content"] or path in args["meta"] or path in args["listed"]:
        return True
    return (any(path.startswith(top.rstrip("/") + "/") for top in args["content"])
            or os.path.dirname(path) in args["listed"])


def _trust_as_template(value: t.Any) -> t.Any:
    try:  # ansible-core 2.19 templates only trusted strings (data read with yaml.safe_load is not)
        from ansible.template import trust_as_template
    except ImportError:  # older ansible-core templates every string
        return value
    return trust_as_template(value)


def trusted(value: t.Any) -> t.Any:
    """``value`` with every string trusted as a template, as Ansible trusts the role's own files."""
    if isinstance(value, str):
        return _trust_as_template(value)
    if isinstance(value, dict):
        return {key: trusted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [trusted(item) for item in value]
    return value


def _templar(variables: dict[str, t.Any]) -> t.Any:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    return Templar(loader=DataLoader(), variables=trusted(variables))


def test_the_push_digest_templates_the_roles_inputs_only(tmp_path: Path) -> None:
    """kamailio_push_inputs is the role's interface (defaults, render and main options but the plan and the files,
    digested as files); an inventory kamailio_* variable the role never reads may fail to template without failing
    the re-run's digest, while a broken input of the role still fails it (the push would read it)."""
    spec = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    interface = set(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()))
    interface |= set(spec["main"]["options"]) | set(spec["render"]["options"])
    role_vars = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    assert role_vars["kamailio_push_inputs"] == sorted(
        name for name in interface - {"kamailio_plan", "kamailio_files"} if name.startswith("kamailio_"))
    # Templated by Ansible itself, the role's defaults below the inventory's host variables, as the role sees them.
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    out = tmp_path / "digested.json"
    inventory = tmp_path / "hosts.json"
    playbook = tmp_path / "digest.yml"
    playbook.write_text(json.dumps([{
        "hosts": "all", "gather_facts": False,
        "vars_files": [str(ROLE / "vars" / "main.yml")],
        "tasks": [{"ansible.builtin.copy": {"content": "{{ kamailio_push_variables | to_json }}", "dest": str(out),
                                            "mode": "0600"}}]}]))
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "commsgw_sbc": {"config_dir": "/srv/sbc/etc"}, "kamailio_refresher_interval_s": 45,
            "kamailio_site_notes": "{{ an_undefined_variable }}"}
    inventory.write_text(json.dumps({"all": {"vars": defaults, "hosts": {"sbc": host}}}))
    play(inventory, [str(playbook)], tmp_path)
    digested = json.loads(out.read_text())
    assert "kamailio_site_notes" not in digested and digested["kamailio_refresher_interval_s"] == 45
    assert "kamailio_version" not in digested  # an input nobody set is not asked for
    assert digested["commsgw_sbc"] == {"config_dir": "/srv/sbc/etc"} and digested["hold"] is False
    assert digested["kamailio_service_manager"] == "systemd"  # the role's defaults are inputs too
    host["kamailio_user"] = "{{ an_undefined_variable }}"
    inventory.write_text(json.dumps({"all": {"vars": defaults, "hosts": {"sbc": host}}}))
    failed = play(inventory, [str(playbook)], tmp_path, check=False)
    assert failed.returncode != 0 and "an_undefined_variable" in failed.stdout, failed.stdout[-2000:]


@pytest.mark.parametrize("manager,rootfs", [("systemd", ""), ("process", ""), ("process", "/srv/rootfs")])
def test_every_path_the_push_writes_is_fingerprinted_for_the_re_run(manager: str, rootfs: str) -> None:
    templar = _templar(_role_variables(manager, rootfs))
    args = {key: templar.template(trusted(value)) for key, value in
            yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["kamailio_converged_defaults"].items()}

    def may_run(conditions: t.Sequence[t.Any]) -> bool:
        for condition in conditions:
            try:
                if not templar.template(_trust_as_template("{{ (%s) | bool }}" % condition)):
                    return False
            # A registered result (undefined here) is decided at run time: the task may run.
            except Exception:  # pylint: disable=broad-except
                continue
        return True

    written = []
    for name in _PUSH_TASK_FILES:
        for task, conditions in _guarded_tasks(yaml.safe_load((ROLE / "tasks" / name).read_text()), []):
            for module, key in _PATH_MODULES.items():
                if module not in task or not may_run(conditions):
                    continue
                items = task["loop"] if isinstance(task.get("loop"), list) else [{"name": "kamailio/refresher.py"}]
                for item in items:
                    templar.available_variables = dict(templar.available_variables, item=trusted(item))
                    written.append((name, task["name"], os.path.normpath(templar.template(trusted(task[module][key])))))
    assert len(written) >= 8, written  # the walker found the push's files
    missing = [entry for entry in written if not _covered(entry[2], args)]
    assert not missing, "written by the push, not fingerprinted by kamailio_converged_defaults: %s" % missing
    # Accounts (group/user tasks) are /etc/passwd and /etc/group; the SBC's TLS files are read by the preflight.
    assert {"/etc/passwd", "/etc/group", "/srv/pki/sbc.key", "/srv/pki/root.pem"} <= set(args["content"])
    if manager == "systemd":
        assert args["active_units"] == ["kamailio.service", "commsgw-srv-refresh.timer"]
    else:
        assert [p["program"] for p in args["processes"]] == ["kamailio", "python"]


def test_the_reads_probe_request_is_the_probe_tasks_options() -> None:
    """playbooks/vars/probe.yml hands the probe's options to the platform's read (docs/rerun.md); the probe task returns
    the read's result only for the same options, so a value that drifts from the task's would silently cost the second
    round trip. Same keys, same expressions (null where the task omits), the plan from the run's own plans."""
    request = yaml.safe_load((REPO / "playbooks" / "vars" / "probe.yml").read_text())["commsgw_probe_options_for_read"]
    play_ = yaml.safe_load((REPO / "playbooks" / "probe.yml").read_text())[0]
    task = next(task for task in play_["tasks"] if "commsgw.routing.probe" in task)["commsgw.routing.probe"]
    passed = {key: value for key, value in task.items()
              if key not in ("report_json", "report_junit", "fail_on_verdict", "result_from_read")}
    assert set(request) == set(passed)

    def normal(text: str) -> str:
        return " ".join(str(text).replace("default(omit)", "default(none)").split())

    assert {key: normal(value) for key, value in request.items() if key != "plan"} == \
        {key: normal(value) for key, value in passed.items() if key != "plan"}
    assert request["plan"] == "{{ hostvars['localhost'].commsgw_plans.host_plans[inventory_hostname] }}"
    assert "hostvars['localhost'].commsgw_plans if" in play_["vars"]["commsgw_probe_plans"]


# name: (the read-back as the read would return it, with "DIGEST" for this input's digest; the rendered artefacts;
# the offline render's directory)
CONVERGENCE_CASES = {
    "as-recorded": ({"reasons": [], "recorded_input": "DIGEST"}, {"kamailio.cfg": "x"}, ""),
    "hand-edit": ({"reasons": ["kamailio.cfg: content changed"], "recorded_input": "DIGEST"}, {"kamailio.cfg": "x"}, ""),
    "other-input": ({"reasons": [], "recorded_input": "0" * 64}, {"kamailio.cfg": "x"}, ""),
    "no-record": ({"reasons": [], "recorded_input": ""}, {"kamailio.cfg": "x"}, ""),
    "no-read": ({"skipped": True}, {"kamailio.cfg": "x"}, ""),
    "offline": ({"skipped": True}, {"kamailio.cfg": "x"}, "/srv/render"),
    "not-files": ({"reasons": [], "recorded_input": "0" * 64}, "not a mapping", ""),
}


def test_the_render_step_decides_as_the_apply_step_does(tmp_path: Path) -> None:
    """onboard.yml leaves the apply step out when the render found the SBC converged (docs/rerun.md): the render's
    decision (kamailio_render_converged) must be the apply step's (kamailio_push_needed) without a hold, or a re-run
    would skip a push the apply step would make. Both run here as the role's own tasks, on one host per case."""
    render = yaml.safe_load((ROLE / "tasks" / "render.yml").read_text())
    main = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    decide_in_render = render[-1]  # the render's last task: nothing after it may change the decision
    assert "commsgw_sbc_converged" in decide_in_render["ansible.builtin.set_fact"]
    digest, decide, push = main[0], main[1], main[2]
    assert "kamailio_input_digest" in digest["ansible.builtin.set_fact"]
    assert "kamailio_push_skipped" in decide["ansible.builtin.set_fact"]
    # The push follows the decision's fact (the decision forgets the read-back it was computed from).
    assert push["ansible.builtin.include_tasks"] == "push.yml" and push["when"] == "not kamailio_push_skipped"
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    hosts = {name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                    "case_readback": readback, "commsgw_sbc_artefacts": artefacts,
                    "commsgw_sbc": {"config_dir": "/srv/sbc/etc"},
                    **({"commsgw_sbc_render_dir": render_dir} if render_dir else {})}
             for name, (readback, artefacts, render_dir) in CONVERGENCE_CASES.items()}
    inventory = tmp_path / "hosts.json"
    inventory.write_text(json.dumps({"all": {"vars": defaults, "hosts": hosts}}))
    out = tmp_path / "decisions"
    out.mkdir()
    this_digest = ("{{ kamailio_files | commsgw.routing.kamailio_input_digest(kamailio_push_variables)"
                   " if kamailio_files is mapping else '' }}")
    playbook = tmp_path / "decide.yml"
    playbook.write_text(json.dumps([{
        "hosts": "all", "gather_facts": False, "vars_files": [str(ROLE / "vars" / "main.yml")],
        "tasks": [
            {"name": "This input's digest", "ansible.builtin.set_fact": {"case_digest": this_digest}},
            {"name": "The read-back of the case", "ansible.builtin.set_fact": {"kamailio_readback": (
                "{{ case_readback | combine({'recorded_input': case_digest}"
                " if case_readback.recorded_input | default('') == 'DIGEST' else {}) }}")}},
            decide_in_render, digest, decide,
            {"ansible.builtin.copy": {
                "content": "{{ {'render_converged': commsgw_sbc_converged, 'push_skipped': kamailio_push_skipped}"
                           " | to_json }}",
                "dest": str(out) + "/{{ inventory_hostname }}.json", "mode": "0600"}}]}]))
    play(inventory, [str(playbook)], tmp_path)
    decisions = {name: json.loads((out / ("%s.json" % name)).read_text()) for name in CONVERGENCE_CASES}
    assert {name: d["render_converged"] for name, d in decisions.items()} == {
        name: name == "as-recorded" for name in CONVERGENCE_CASES}
    assert all(d["render_converged"] == d["push_skipped"] for d in decisions.values()), decisions
