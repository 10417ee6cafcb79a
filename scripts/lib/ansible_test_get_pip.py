# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for the get-pip.py that ansible-test downloads from ci-files.testing.ansible.com.

ansible-test sanity --venv bootstraps pip into each fresh virtual environment by running
~/.ansible/test/cache/get_pip_<version>.py with pip-install arguments, for example
``--disable-pip-version-check pip==24.2 --no-setuptools --no-wheel``. That host is not reachable
from our CI, so scripts/test copies this file into the cache: it installs pip from the
interpreter's own ensurepip wheel (run from the wheel, never from the venv it installs into) and
lets it fetch the exact requested packages from the package index (which is reachable).
"""

import glob
import os
import subprocess
import sys

# get-pip.py options that plain 'pip install' does not understand.
GET_PIP_ONLY_OPTIONS = ("--no-setuptools", "--no-wheel")

# Recognised by scripts/lib/setup.sh so it replaces only its own copy, never a real get-pip.py.
MARKER = "commsgw-routing-get-pip-stand-in"


def bundled_pip_wheel():
    """The pip wheel ensurepip would install (CPython's bundle, or Debian's python-wheels), or None."""
    import ensurepip  # pylint: disable=import-outside-toplevel

    patterns = [os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl"),
                "/usr/share/python-wheels/pip-*.whl"]
    for pattern in patterns:
        wheels = sorted(glob.glob(pattern))
        if wheels:
            return wheels[-1]
    return None


def main():
    """Install the requested packages (pip itself among them) with a pip that is not being replaced.

    A pip installed into the venv and then told to install another pip version replaces its own
    files while it runs; its later imports can then mix both versions (seen once on a fresh
    machine: ``ImportError: cannot import name 'get_default_environment'``). pip run from the
    bundled wheel (a zip pip supports running from) reads none of the files it replaces.
    """
    args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]
    wheel = bundled_pip_wheel()
    if wheel is not None:
        return subprocess.run([sys.executable, os.path.join(wheel, "pip"), "install"] + args,
                              check=False).returncode
    subprocess.run([sys.executable, "-m", "ensurepip", "--default-pip"], check=True,
                   stdout=subprocess.DEVNULL)
    return subprocess.run([sys.executable, "-m", "pip", "install"] + args, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
