# shellcheck shell=bash
# The ansible-core version matrix of `scripts/test matrix` (issue 11 item 1). Sourced by scripts/test
# after commsgw_setup. Each entry gets a cached venv (rebuilt only when its pins change; kept outside
# the checkout so that CI's fresh clones reuse it, locked while in use) and runs the offline suite there: the unit tests, tests/matrix (validate, plan and render of
# inventory/lab and inventory/production from the INSTALLED release tarball) and the Molecule scenario.
#
#   oldest  the ansible-core that meta/runtime.yml's requires_ansible names, latest patch, python3
#   newest  the newest ansible-core, which needs Python >= 3.12 (COMMSGW_MATRIX_PYTHON, else a
#           python3.13/python3.12 that runs, else one under pyenv's versions/)
# The README's pin (constraints-test.txt) is the main venv, tested by the other stages.
#
# Environment knobs:
#   COMMSGW_MATRIX_DIR     venv cache (default: ~/.cache/commsgw-routing/venv-matrix)
#   COMMSGW_MATRIX_PYTHON  interpreter (>= 3.12) for the newest core
#   COMMSGW_MATRIX_ONLY    run one entry only: oldest or newest

COMMSGW_MATRIX_OLDEST="2.16.19"
COMMSGW_MATRIX_NEWEST="2.21.5"

# An interpreter ansible-core 2.16 supports as a controller (3.10 to 3.12); python3 when none is found
# (Debian 13's python3 is 3.13, which 2.16 does not list).
commsgw_matrix_old_python() {
    local candidate
    for candidate in "${COMMSGW_MATRIX_OLD_PYTHON:-}" python3 python3.12 python3.11 \
        "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.1[0-2]*/bin/python3; do
        [ -n "$candidate" ] || continue
        if "$candidate" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info < (3, 13))' >/dev/null 2>&1; then
            command -v "$candidate" || echo "$candidate"
            return 0
        fi
    done
    echo python3
}

# An interpreter >= 3.12 that really runs (a pyenv shim for a version not selected exits non-zero).
commsgw_matrix_new_python() {
    local candidate
    for candidate in "${COMMSGW_MATRIX_PYTHON:-}" python3.13 python3.12 \
        "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.1[3-9]*/bin/python3 \
        "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.12*/bin/python3; do
        [ -n "$candidate" ] || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
            command -v "$candidate" || echo "$candidate"
            return 0
        fi
    done
    return 1
}

# commsgw_matrix_venv NAME PYTHON CORE: creates/refreshes .venv-matrix/NAME, prints its path.
commsgw_matrix_venv() {
    local name="$1" python="$2" core="$3"
    local dir="${COMMSGW_MATRIX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commsgw-routing/venv-matrix}/$name"
    # The test tools at the README's pins, every ansible-* pin left out (the core is this entry's).
    local constraints="$dir.constraints.txt"
    mkdir -p "$(dirname "$dir")"
    grep -iv '^ansible-' "$COMMSGW_ROOT/constraints-test.txt" >"$constraints"
    local want stamp="$dir/.commsgw-matrix.sha256"
    want="$(cat "$constraints" "$COMMSGW_ROOT/requirements.txt" <(echo "$core") <("$python" -VV) \
        | sha256sum | cut -d' ' -f1)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        commsgw_log "matrix $name: venv ready ($dir)"
    else
        commsgw_log "matrix $name: installing ansible-core==$core with $("$python" -V) into $dir"
        rm -rf "$dir"
        "$python" -m venv "$dir" >&2
        "$dir/bin/python" -m pip install --disable-pip-version-check -q -c "$constraints" \
            -r "$COMMSGW_ROOT/requirements.txt" "ansible-core==$core" molecule pytest hypothesis PyYAML \
            sipmessage >&2
        printf '%s\n' "$want" >"$stamp"
    fi
    echo "$dir"
}

# The unit tests that run Ansible's own code (modules, action and filter plugins, ansible.module_utils);
# the rest is plain Python, the same on every core, and runs in the pytest stage. Set
# COMMSGW_MATRIX_UNIT=all for the whole of tests/unit (about 2-4 minutes more per core).
# Paths below tests/unit (which mirrors plugins/module_utils' rooms).
COMMSGW_MATRIX_UNIT_TESTS=(plan/test_core_policy kamailio/test_kamailio_tls_render kamailio/test_kamailio_view
                           plan/test_mcp migration/test_migration kamailio/test_refresher
                           inventory/test_region_catalog srv/test_srv_hostile validation/test_validation)

# commsgw_matrix_run NAME PYTHON CORE: the offline suite on one core; non-zero when any part failed.
commsgw_matrix_run() {
    local name="$1" python="$2" core="$3" rc=0 units=() test
    local cache="${COMMSGW_MATRIX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/commsgw-routing/venv-matrix}"
    if [ "${COMMSGW_MATRIX_UNIT:-}" = all ]; then
        units=(tests/unit)
    else
        for test in "${COMMSGW_MATRIX_UNIT_TESTS[@]}"; do
            units+=("tests/unit/$test.py")
        done
    fi
    (
        local venv
        # Another checkout's matrix run may want to rebuild this venv: one user at a time.
        mkdir -p "$cache"
        exec 8>"$cache/$name.lock"
        flock 8
        venv="$(COMMSGW_MATRIX_DIR="$cache" commsgw_matrix_venv "$name" "$python" "$core")" || exit 1
        export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
        "$venv/bin/ansible-playbook" --version 2>&1 | sed -n '1p;/python version/p' >&2
        # Tests that run this interpreter as another user (setpriv) need it readable by that user;
        # a pyenv build under /root is not.
        local deselect=()
        if ! setpriv --reuid=65534 --regid=65534 --clear-groups "$venv/bin/python" -c '' >/dev/null 2>&1; then
            commsgw_warn "matrix $name: $venv/bin/python cannot run as nobody: its setpriv tests are left out"
            deselect=(--deselect tests/unit/kamailio/test_refresher.py::test_reply_dir_of_a_group_member_is_open_to_that_group_only
                      --deselect tests/unit/kamailio/test_refresher.py::test_reply_dir_open_to_everyone_is_refused
                      --deselect tests/unit/kamailio/test_rpc_local_users.py::test_a_member_of_kamailios_group_gets_its_answer)
        fi
        # Temporary files under /tmp, not in the checkout: a deep checkout path would push the tests' UNIX
        # socket paths past sun_path's 108 bytes.
        local basetemp
        basetemp="$(mktemp -d "/tmp/commsgw-matrix-$name.XXXXXX")"
        trap 'rm -rf "$basetemp"' EXIT
        "$venv/bin/python" -m pytest -q -p no:cacheprovider --basetemp="$basetemp/pytest" \
            "${deselect[@]}" tests/matrix "${units[@]}" || exit 1
        molecule test || exit 1
    ) || rc=1
    return "$rc"
}

stage_matrix() {
    local failed=0 only="${COMMSGW_MATRIX_ONLY:-}" new_python
    if [ -z "$only" ] || [ "$only" = oldest ]; then
        commsgw_matrix_run oldest "$(commsgw_matrix_old_python)" "$COMMSGW_MATRIX_OLDEST" || failed=1
    fi
    if [ -z "$only" ] || [ "$only" = newest ]; then
        if new_python="$(commsgw_matrix_new_python)"; then
            commsgw_matrix_run newest "$new_python" "$COMMSGW_MATRIX_NEWEST" || failed=1
        else
            commsgw_warn "no Python >= 3.12 found (set COMMSGW_MATRIX_PYTHON): ansible-core $COMMSGW_MATRIX_NEWEST not tested"
            failed=1
        fi
    fi
    return "$failed"
}
