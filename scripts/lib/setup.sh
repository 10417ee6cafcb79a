# shellcheck shell=bash
# Shared setup for scripts/test and scripts/lab: Debian packages, the local virtualenv and the
# collection symlink. Sourced, never executed; every step is idempotent and cheap when already done.
#
# Environment knobs:
#   COMMSGW_PYTHON    interpreter used to create the venv (default: python3)
#   COMMSGW_VENV      venv location (default: <repo>/.venv)
#   COMMSGW_SKIP_APT  set to 1 to never call apt-get (e.g. on a developer laptop)

COMMSGW_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
COMMSGW_VENV="${COMMSGW_VENV:-$COMMSGW_ROOT/.venv}"
COMMSGW_PACKAGE_LIST="$COMMSGW_ROOT/scripts/debian-packages.txt"

commsgw_log() {
    printf '==> %s\n' "$*" >&2
}

commsgw_warn() {
    printf 'WARNING: %s\n' "$*" >&2
}

# Package names from scripts/debian-packages.txt, without comments and blank lines.
commsgw_debian_packages() {
    sed -e 's/#.*//' -e 's/[[:space:]]//g' "$COMMSGW_PACKAGE_LIST" | grep -v '^$'
}

# Installs the Debian packages that are missing. Asking dpkg first keeps a second run free of
# apt-get update (slow, and needs the mirror).
commsgw_setup_apt() {
    if [ "${COMMSGW_SKIP_APT:-0}" = 1 ]; then
        commsgw_log "Debian packages: skipped (COMMSGW_SKIP_APT=1)"
        return 0
    fi
    if ! command -v dpkg-query >/dev/null 2>&1; then
        commsgw_warn "not a Debian system: install the packages in $COMMSGW_PACKAGE_LIST yourself"
        return 0
    fi
    local pkg missing=()
    while read -r pkg; do
        if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
            missing+=("$pkg")
        fi
    done < <(commsgw_debian_packages)
    if [ "${#missing[@]}" -eq 0 ]; then
        commsgw_log "Debian packages: all present"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        commsgw_warn "not root, cannot install missing Debian packages: ${missing[*]}"
        commsgw_warn "tests that need them will fail or skip; run as root or install them with apt-get"
        return 0
    fi
    commsgw_log "Debian packages: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Creates the venv if needed and installs a requirements file into it. A stamp keyed on the
# requirements content and the interpreter version skips pip entirely on the next run.
commsgw_setup_venv() {
    local requirements="$1"
    local python="${COMMSGW_PYTHON:-python3}"
    if ! "$COMMSGW_VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        commsgw_log "venv: creating $COMMSGW_VENV with $python"
        "$python" -m venv "$COMMSGW_VENV"
    fi
    local stamp want
    stamp="$COMMSGW_VENV/.commsgw-$(basename "$requirements").sha256"
    # requirements-test.txt includes requirements.txt and the pins of constraints-test.txt, so hash
    # all three plus the interpreter version.
    want="$(cat "$COMMSGW_ROOT/requirements.txt" "$COMMSGW_ROOT/constraints-test.txt" "$requirements" \
        <("$COMMSGW_VENV/bin/python" -VV) | sha256sum | cut -d' ' -f1)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        commsgw_log "venv: $(basename "$requirements") already installed"
    else
        commsgw_log "venv: installing $(basename "$requirements")"
        "$COMMSGW_VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$requirements"
        printf '%s\n' "$want" >"$stamp"
    fi
    export VIRTUAL_ENV="$COMMSGW_VENV"
    export PATH="$COMMSGW_VENV/bin:$PATH"
}

# ansible-playbook and the Python imports find this checkout as commsgw.routing through
# .collections/ansible_collections/commsgw/routing -> repo root (see ansible.cfg).
commsgw_link_collection() {
    local parent="$COMMSGW_ROOT/.collections/ansible_collections/commsgw"
    local link="$parent/routing"
    mkdir -p "$parent"
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$COMMSGW_ROOT" ]; then
        return 0
    fi
    if [ -e "$link" ] && [ ! -L "$link" ]; then
        commsgw_warn "$link exists and is not a symlink; remove it"
        return 1
    fi
    rm -f "$link"
    ln -s "$COMMSGW_ROOT" "$link"
    commsgw_log "collection: linked $link -> $COMMSGW_ROOT"
}

# Where scripts/lab keeps its files when COMMSGW_LAB_DIR is not set: .lab/ at the top of the checkout,
# unless the checkout's path cannot hold a lab. The SBC paths under it go into Kamailio's configuration,
# which takes no space or quote in a path (validation refuses them), and hold Kamailio's UNIX sockets
# (.../sbc/<host>/run/kamailio_rpc.sock, at most 108 bytes); such a checkout's lab lives under
# /var/lib/commsgw-lab/<hash of the checkout's path> (root's, as the lab's Kamailio runs as root).
commsgw_lab_dir() {
    local dir="$COMMSGW_ROOT/.lab"
    if [[ "$dir" =~ [[:space:]\"\'\\] ]] || [ "${#dir}" -gt 64 ]; then
        dir="/var/lib/commsgw-lab/$(printf '%s' "$COMMSGW_ROOT" | sha256sum | cut -c1-12)"
    fi
    printf '%s\n' "$dir"
}

# Everything a command needs before it runs: packages, venv, collection path, environment.
commsgw_setup() {
    local requirements="$1"
    commsgw_setup_apt
    commsgw_setup_venv "$requirements"
    commsgw_link_collection
    export ANSIBLE_CONFIG="$COMMSGW_ROOT/ansible.cfg"
    export ANSIBLE_COLLECTIONS_PATH="$COMMSGW_ROOT/.collections"
    export PYTHONPATH="$COMMSGW_ROOT/.collections${PYTHONPATH:+:$PYTHONPATH}"
    cd "$COMMSGW_ROOT" || return 1
}
