# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The credential for the ARM reader, and the lazy import of the Azure libraries.

Order: an explicit ``access_token`` (a CI job that already holds one from
``az account get-access-token``); else a service principal given as options; else azure-identity's
DefaultAzureCredential, which reads the usual environment (AZURE_TENANT_ID, AZURE_CLIENT_ID,
AZURE_CLIENT_SECRET, AZURE_AUTHORITY_HOST, workload identity, managed identity, az login...).
"""

from __future__ import annotations

import time
import typing as t

REQUIRED_LIBRARIES = "azure-identity>=1.16 and azure-core>=1.30 (pip install azure-identity)"


def missing_library() -> t.Optional[str]:
    """The import error text when azure-core or azure-identity is missing, else None."""
    try:
        import azure.core.pipeline  # noqa: F401  pylint: disable=unused-import
        import azure.identity  # noqa: F401  pylint: disable=unused-import
    except ImportError as exc:
        return str(exc)
    return None


class StaticToken:
    """A credential that hands out one bearer token it was given (never refreshed)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kwargs: t.Any) -> t.Any:
        from azure.core.credentials import AccessToken
        return AccessToken(self._token, int(time.time()) + 3600)


def build_credential(access_token: t.Optional[str] = None, tenant_id: t.Optional[str] = None,
                     client_id: t.Optional[str] = None, client_secret: t.Optional[str] = None,
                     authority_host: t.Optional[str] = None, disable_instance_discovery: bool = False,
                     verify: t.Union[bool, str] = True) -> t.Any:
    if access_token:
        return StaticToken(access_token)
    from azure.identity import ClientSecretCredential, DefaultAzureCredential

    kwargs: dict[str, t.Any] = {"connection_verify": verify}
    if authority_host:
        kwargs["authority"] = authority_host
    if disable_instance_discovery:
        kwargs["disable_instance_discovery"] = True
    if client_id or client_secret:
        if not (tenant_id and client_id and client_secret):
            raise ValueError("tenant_id, client_id and client_secret go together (a service principal); "
                             "leave all three out to use DefaultAzureCredential")
        return ClientSecretCredential(tenant_id, client_id, client_secret, **kwargs)
    return DefaultAzureCredential(**kwargs)
