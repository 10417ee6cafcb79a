#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: acg_resource_info
short_description: Read an Azure Communications Gateway resource from Azure Resource Manager
version_added: 0.1.0
description:
  - Reads one C(Microsoft.VoiceServices/communicationsGateways) resource as raw JSON and returns the properties
    it used and a normalised view (service locations, allowed signalling sources, operator addresses, SKU...).
  - The api-version is the newest stable one the resource provider advertises, unless O(api_version) pins one.
  - Authenticates with O(access_token), else the service principal O(tenant_id)/O(client_id)/O(client_secret),
    else azure-identity's DefaultAzureCredential (C(AZURE_TENANT_ID), C(AZURE_CLIENT_ID), C(AZURE_CLIENT_SECRET),
    C(AZURE_AUTHORITY_HOST), workload or managed identity, C(az login)).
  - The identity needs the Reader role on the ACG resource.
  - Each failure (authentication, 403, 404, throttling, server error, TLS, unknown shape) has its own message
    and RV(error_kind).
  - The answer must be the resource asked for - its C(id) and C(name) equal the request's (case-insensitively),
    else the module fails with RV(error_kind=mismatch); RV(resource_name) comes from the request, never from the answer.
author: commsgw.routing contributors (@commsgw)
requirements:
  - azure-identity >= 1.16
  - azure-core >= 1.30
options:
  resource_id:
    description: Full ARM id of the ACG resource; or give O(subscription_id), O(resource_group) and O(name).
    type: str
  subscription_id:
    description: Subscription of the ACG resource.
    type: str
  resource_group:
    description: Resource group of the ACG resource.
    type: str
  name:
    description: Name of the ACG resource.
    type: str
  arm_endpoint:
    description: Azure Resource Manager endpoint (sovereign clouds have their own).
    type: str
    default: https://management.azure.com
  token_scope:
    description: Token scope; default O(arm_endpoint) followed by C(/.default).
    type: str
  api_version:
    description: Pin an api-version instead of negotiating it.
    type: str
  timeout:
    description: Seconds to wait for each HTTP answer.
    type: int
    default: 30
  max_retries:
    description: Extra attempts after a 429 (or 503) with Retry-After.
    type: int
    default: 3
  max_retry_wait:
    description: Total seconds spent waiting on Retry-After before giving up.
    type: int
    default: 60
  validate_certs:
    description:
      - Verify the TLS certificate of the endpoint (and of the authority).
      - V(false) warns - anyone on the path can then answer as ARM; prefer giving the endpoint's CA in O(ca_path).
    type: bool
    default: true
  ca_path:
    description: PEM bundle of CAs to trust for the endpoint and the authority instead of the system's.
    type: path
  access_token:
    description:
      - A bearer token for O(token_scope), e.g. from C(az account get-access-token) in a CI job.
    type: str
  tenant_id:
    description: Tenant of a service principal (with O(client_id) and O(client_secret)).
    type: str
  client_id:
    description: Application (client) id of a service principal.
    type: str
  client_secret:
    description: Secret of the service principal.
    type: str
  authority_host:
    description: Microsoft Entra authority host (sovereign clouds); default C(AZURE_AUTHORITY_HOST) or the public one.
    type: str
  disable_instance_discovery:
    description: Do not ask the public cloud to validate O(authority_host) (private or test authorities).
    type: bool
    default: false
attributes:
  check_mode:
    description: Only reads; the same in check mode.
    support: full
  diff_mode:
    description: Makes no change.
    support: none
"""

EXAMPLES = r"""
- name: Read the ACG resource
  commsgw.routing.acg_resource_info:
    subscription_id: 00000000-0000-0000-0000-000000000000
    resource_group: rg-acg
    name: contoso-emea
  register: acg
"""

RETURN = r"""
resource_id:
  description: The ARM id read.
  returned: success
  type: str
resource_name:
  description:
    - The name of the resource read, taken from the request (validated - letters, digits, '.', '_', '-', '(' and ')',
      not ending in '.'), so safe as a file name (playbooks/azure_check.yml names the draft after it).
  returned: success
  type: str
  sample: contoso-emea
api_version:
  description: The api-version used.
  returned: success
  type: str
  sample: "2023-09-01"
raw:
  description: The fields of the ARM resource body the normalised view used (id, name, location, sku, properties).
  returned: success
  type: dict
resource:
  description: The normalised view, with C(service_locations) (name, operator_addresses, allowed_signaling_prefixes,
    allowed_media_prefixes, esrp_addresses) and deployment-wide facts (sku, provisioning_state, status, e911_type...).
  returned: success
  type: dict
error_kind:
  description: On failure, one of options, missing_library, auth, forbidden, not_found, throttled, server, tls,
    timeout, connection, http, shape, mismatch.
  returned: failure
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.commsgw.routing.plugins.module_utils.azure.arm import ArmError
from ansible_collections.commsgw.routing.plugins.module_utils.azure.credential import (
    REQUIRED_LIBRARIES, missing_library)
from ansible_collections.commsgw.routing.plugins.module_utils.azure.info import insecure_warning, read_acg

ARGUMENT_SPEC = {
    "resource_id": {"type": "str"},
    "subscription_id": {"type": "str"},
    "resource_group": {"type": "str"},
    "name": {"type": "str"},
    "arm_endpoint": {"type": "str", "default": "https://management.azure.com"},
    "token_scope": {"type": "str", "no_log": False},  # a URL, not a secret
    "api_version": {"type": "str"},
    "timeout": {"type": "int", "default": 30},
    "max_retries": {"type": "int", "default": 3},
    "max_retry_wait": {"type": "int", "default": 60},
    "validate_certs": {"type": "bool", "default": True},
    "ca_path": {"type": "path"},
    "access_token": {"type": "str", "no_log": True},
    "tenant_id": {"type": "str"},
    "client_id": {"type": "str"},
    "client_secret": {"type": "str", "no_log": True},
    "authority_host": {"type": "str"},
    "disable_instance_discovery": {"type": "bool", "default": False},
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           mutually_exclusive=[("resource_id", "subscription_id"), ("resource_id", "name")])
    problem = missing_library()
    if problem:
        module.fail_json(msg=missing_required_lib(REQUIRED_LIBRARIES), exception=problem,
                         error_kind="missing_library")
    warning = insecure_warning(module.params)
    if warning:
        module.warn(warning)
    try:
        result = read_acg(module.params)
    except ArmError as exc:
        module.fail_json(msg=exc.message, error_kind=exc.kind)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
