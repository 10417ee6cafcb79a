# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DNS resolver options of srv_audit and probe: one name and one meaning for both."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  nameservers:
    description:
      - IPv4 or IPv6 addresses of the nameservers to ask. Default is C(/etc/resolv.conf) of the host the module runs
        on (the controller for srv_audit, the SBC for probe).
    type: list
    elements: str
  dns_port:
    description: UDP/TCP port of O(nameservers).
    type: int
    default: 53
  dns_timeout:
    description: Seconds one DNS lookup may take in total before it is reported as a timeout.
    type: float
    default: 2.0
"""
