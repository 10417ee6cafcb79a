# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for the get-pip.py that ansible-test downloads from ci-files.testing.ansible.com.

ansible-test sanity --venv bootstraps pip into each fresh virtual environment by running
~/.ansible/test/cache/get_pip_<version>.py with pip-install arguments, for example
``--disable-pip-version-check pip==24.2 --no-setuptools --no-wheel``. That host is not reachable
from our CI, so scripts/test copies this file into the cache: it installs pip from the
interpreter's own ensurepip wheel, then lets that pip fetch the exact requested packages from the
package index (which is reachable).
"""

import subprocess
import sys

# get-pip.py options that plain 'pip install' does not understand.
GET_PIP_ONLY_OPTIONS = ("--no-setuptools", "--no-wheel")

# Recognised by scripts/lib/setup.sh so it replaces only its own copy, never a real get-pip.py.
MARKER = "commsgw-routing-get-pip-stand-in"


def main() -> int:
    """Bootstrap pip with ensurepip, then install the requested packages with it."""
    args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]
    subprocess.run([sys.executable, "-m", "ensurepip", "--default-pip"], check=True,
                   stdout=subprocess.DEVNULL)
    return subprocess.run([sys.executable, "-m", "pip", "install"] + args, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
