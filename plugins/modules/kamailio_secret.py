#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: kamailio_secret
short_description: Keep the SBC's own secret (dialog-name MAC key, ping relay token) on the SBC host
version_added: 0.1.0
description:
  - Creates, on the SBC host itself, the file Kamailio reads with C(import_file) for two values only it may
    know (docs/kamailio-tls.md) - the key of the MAC the SBC puts next to a dialog's TLS name in its
    Record-Route, so that a forged name in a Route is never believed, and the token of its own OPTIONS
    pings, so that the ping relay socket relays nothing else.
  - The values come from the host's CSPRNG and never leave it - not in the module's result, not in a
    rendered file, a diff or a backup. An existing valid secret is kept as it is, so calls stay up across
    pushes, reloads and restarts; only its owner and mode are corrected. A file that is not a valid secret
    is replaced.
  - The file is owned by O(owner), group root, mode 0400, in a directory that must be root's and writable by
    root only (created 0711 when missing; its parent must exist). Symlinks are refused and everything is done
    through file descriptors.
  - Check mode reports what would change and creates nothing.
author: commsgw.routing contributors (@commsgw)
options:
  path:
    description: The secret file; must lie outside Kamailio's configuration directory (C(commsgw_sbc.secret_file)).
    type: path
    required: true
  owner:
    description: The user Kamailio runs as (the only user besides root that may read the file).
    type: str
    default: kamailio
attributes:
  check_mode:
    description: Reports what would change; writes nothing.
    support: full
  diff_mode:
    description: No diff is ever shown (the content is secret).
    support: none
"""

EXAMPLES = r"""
- name: Keep this SBC's own secret
  commsgw.routing.kamailio_secret:
    path: /var/lib/kamailio-commsgw/secret.cfg
    owner: kamailio
  become: true
"""

RETURN = r"""
path:
  description: The secret file.
  returned: always
  type: str
created:
  description: Whether a new secret was (or, in check mode, would be) generated.
  returned: always
  type: bool
fixed:
  description: What was (or would be) corrected on an existing file - C(content) (not a valid secret, replaced), C(owner), C(mode).
  returned: always
  type: list
  elements: str
"""

import pwd

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.commsgw.routing.plugins.module_utils.kamailio.secret import SecretError, ensure_secret


def main():
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "owner": {"type": "str", "default": "kamailio"},
        },
        supports_check_mode=True,
    )
    path = module.params["path"]
    try:
        uid = pwd.getpwnam(module.params["owner"]).pw_uid
    except KeyError:
        if module.check_mode:  # the user comes with the Kamailio package a real run installs
            module.exit_json(changed=True, path=path, created=True, fixed=[])
        module.fail_json(msg="owner %s: no such user on this host (install Kamailio first)" % module.params["owner"],
                         path=path)
    try:
        result = ensure_secret(path, uid, check_mode=module.check_mode)
    except (SecretError, OSError) as exc:
        module.fail_json(msg="the SBC secret %s: %s" % (path, exc), path=path)
    module.exit_json(changed=result.changed, path=path, created=result.created, fixed=result.fixed)


if __name__ == "__main__":
    main()
