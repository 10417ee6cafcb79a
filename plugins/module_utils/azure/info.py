# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What commsgw.routing.acg_resource_info does, as plain Python: options in, result (or ArmError) out."""

from __future__ import annotations

import typing as t

from ansible_collections.commsgw.routing.plugins.module_utils.azure.arm import (
    ArmError, ArmReader, ArmSettings, check_answer_is_the_resource, read_resource, resource_id, resource_name)
from ansible_collections.commsgw.routing.plugins.module_utils.azure.credential import build_credential
from ansible_collections.commsgw.routing.plugins.module_utils.azure.resource import normalise, used_fields


def settings_from(params: t.Mapping[str, t.Any]) -> ArmSettings:
    endpoint = params["arm_endpoint"].rstrip("/")
    if not endpoint.lower().startswith("https://"):
        raise ArmError("options", "arm_endpoint %r is not an https:// URL; expected e.g. %s"
                       % (params["arm_endpoint"], "https://management.azure.com"))
    verify: t.Union[bool, str] = params["ca_path"] or params["validate_certs"]
    return ArmSettings(endpoint=endpoint, scope=params.get("token_scope"), api_version=params.get("api_version"),
                       timeout=float(params["timeout"]), verify=verify, max_retries=params["max_retries"],
                       max_retry_wait=float(params["max_retry_wait"]))


def insecure_warning(params: t.Mapping[str, t.Any]) -> t.Optional[str]:
    """The warning for a run that does not verify the endpoint's certificate, or None."""
    if params.get("ca_path") or params.get("validate_certs", True):
        return None
    return ("validate_certs is false: the certificates of %s and of the authority are not verified, so anyone "
            "on the path can answer as Azure Resource Manager (and receive the credential); give the endpoint's "
            "CA in ca_path instead" % params.get("arm_endpoint"))


def read_acg(params: t.Mapping[str, t.Any], sleep: t.Optional[t.Callable[[float], None]] = None) -> dict[str, t.Any]:
    """``{"raw", "api_version", "resource", "resource_id", "resource_name"}`` for the ACG resource the options
    name; ``resource_name`` comes from the (validated) request, never from ARM's answer."""
    rid = resource_id(params.get("subscription_id"), params.get("resource_group"), params.get("name"),
                      params.get("resource_id"))
    settings = settings_from(params)
    try:
        credential = build_credential(params.get("access_token"), params.get("tenant_id"), params.get("client_id"),
                                      params.get("client_secret"), params.get("authority_host"),
                                      bool(params.get("disable_instance_discovery")), settings.verify)
    except ValueError as exc:
        raise ArmError("options", str(exc))
    reader = ArmReader(settings, credential, sleep) if sleep else ArmReader(settings, credential)
    body, version = read_resource(reader, rid)
    check_answer_is_the_resource(body, rid)
    resource = normalise(body)
    return {"resource_id": rid, "resource_name": resource_name(rid), "api_version": version, "raw": used_fields(body),
            "resource": resource.as_dict()}
