# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The skeleton's platform options (O(platform_options) of commsgw.routing's generic modules); their spec is
``OPTIONS`` in plugins/module_utils/skeleton/platform.py."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  platform_options:
    description: The skeleton platform's options (C(commsgw_sbc_platform=commsgw_test.skeleton.skeleton)).
    type: dict
    suboptions:
      url:
        description: The device's management API (C(commsgw_sbc.api_url)).
        type: str
        required: true
      username:
        description: The API user (C(commsgw_sbc.api_username)).
        type: str
        required: true
      password:
        description: Its password (the host variable C(skeleton_api_password), kept in a vault).
        type: str
        required: true
      ca_path:
        description: CA bundle the device's HTTPS certificate is verified against (C(commsgw_sbc.api_ca_path)).
        type: path
      validate_certs:
        description: Verify the device's certificate.
        type: bool
        default: true
      timeout_s:
        description: Seconds one API request may take.
        type: float
        default: 5.0
"""
