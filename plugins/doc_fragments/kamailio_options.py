# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kamailio's platform options (O(platform_options) of the generic modules when O(platform=kamailio)).

Their argument spec is ``OPTIONS`` in plugins/module_utils/kamailio/platform.py;
tests/unit/sbc/test_platform_contract.py keeps this documentation and that spec the same."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  platform_options:
    description: Kamailio's platform options (C(commsgw_sbc_platform=kamailio)).
    type: dict
    suboptions:
      config_dir:
        description: The live configuration directory (C(commsgw_sbc.config_dir)); its C(kamailio.cfg) names the RPC endpoints.
        type: path
        default: /etc/kamailio
      run_dir:
        description: Kamailio's run directory (C(commsgw_sbc.run_dir)), holding the jsonrpcs socket and FIFO.
        type: path
        default: /run/kamailio
      run_as_user:
        description:
          - The account Kamailio runs as (the kamailio role's C(kamailio_user)). Run as root, the readers drop to it
            (a forked child takes its uid, gid and groups) and take RPC answers only from it or root.
        type: str
        default: kamailio
      group:
        description: Kamailio's group (the kamailio role's C(kamailio_group)); a local reader of its files joins it.
        type: str
        default: kamailio
      rpc_group:
        description: The group of Kamailio's jsonrpcs socket (the kamailio role's C(kamailio_rpc_group)), where the host has it.
        type: str
        default: commsgw-rpc
      rpc_socket:
        description: The jsonrpcs datagram socket, when not the one C(kamailio.cfg) declares.
        type: path
      rpc_fifo:
        description: The jsonrpcs FIFO, when not the one C(kamailio.cfg) declares.
        type: path
      rpc_timeout_s:
        description: Seconds to wait for each RPC answer.
        type: float
        default: 3.0
"""
