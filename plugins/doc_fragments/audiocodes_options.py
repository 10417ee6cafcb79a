# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AudioCodes Mediant's platform options (O(platform_options) of the generic modules when
O(platform=audiocodes)).

Their argument spec is ``OPTIONS`` in plugins/module_utils/audiocodes/platform.py;
tests/unit/sbc/test_platform_contract.py keeps this documentation and that spec the same."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  platform_options:
    description:
      - The AudioCodes Mediant's platform options (C(commsgw_sbc_platform=audiocodes)). The device is reached through
        its REST API from the controller (or execution environment); nothing runs on the device.
    type: dict
    suboptions:
      url:
        description: The device's REST API, C(https://<device>[:port]) (C(commsgw_sbc.api_url)).
        type: str
        required: true
      username:
        description: The device user the requests authenticate as, HTTP Basic (C(commsgw_sbc.api_username)).
        type: str
        required: true
      password:
        description: That user's password (host variable C(audiocodes_api_password), kept in a vault). Never logged.
        type: str
        required: true
      ca_path:
        description: CA certificate(s) on the controller that signed the device's HTTPS certificate (C(commsgw_sbc.api_ca_path)); default the system store.
        type: path
      validate_certs:
        description: Verify the device's HTTPS certificate (C(commsgw_sbc.api_validate_certs)). C(false) is warned about on every run.
        type: bool
        default: true
      timeout_s:
        description: Seconds one request may take.
        type: float
        default: 30.0
      conflict_attempts:
        description: How many times a request answered 409 (HA synchronisation in progress) is sent in all.
        type: int
        default: 10
      conflict_delay_s:
        description: Seconds between those attempts.
        type: float
        default: 3.0
      index_base:
        description: The first row index of every table this collection owns on the device (C(commsgw_sbc.index_base)).
        type: int
        default: 100
      deployment:
        description: The ACG deployment's name (C(commsgw_deployment.name)); the device does not hold it, the read-back reports it.
        type: str
      deployment_type:
        description: The deployment's type, lab or production (C(commsgw_deployment.type)); the read-back reports it.
        type: str
      site:
        description: The operator site of this SBC (C(commsgw_site)); the read-back reports it.
        type: str
      state_dir:
        description:
          - Directory on the controller keeping each device's backups (its ini before every change) and its migration
            hold (host variable C(audiocodes_state_dir)). Directories 0700, files 0600. C(~) is the controller user's home.
        type: str
        default: ~/.local/state/commsgw-routing/audiocodes
"""
