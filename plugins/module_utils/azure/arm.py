# -*- coding: utf-8 -*-
# Copyright: (c) 2026, commsgw.routing contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read one ACG resource (Microsoft.VoiceServices/communicationsGateways) from Azure Resource Manager.

Raw JSON over azure-core's pipeline, authenticated by azure-identity (DefaultAzureCredential unless
told otherwise): the SDK ``azure-mgmt-voiceservices`` is pinned to 2023-01-31 and silently drops newer
fields, so the api-version is negotiated from what the resource provider advertises. Every failure
becomes one ``ArmError`` whose ``kind`` and message say what went wrong and what to do.

azure-core and azure-identity are imported lazily (only this reader needs them): ``missing_library``
tells the module what to report when they are absent.
"""

from __future__ import annotations

import dataclasses
import re
import time
import typing as t

PROVIDER = "Microsoft.VoiceServices"
RESOURCE_TYPE = "communicationsGateways"
# Newest first. Used when the provider's list cannot be read (ARM answers every api-version it knows).
FALLBACK_API_VERSIONS = ("2023-09-01", "2023-04-03", "2023-01-31")
# The api-version of ARM's own "get a resource provider" call at tenant scope.
PROVIDERS_API_VERSION = "2021-04-01"
PUBLIC_ARM_ENDPOINT = "https://management.azure.com"
_STABLE = re.compile(r"\A\d{4}-\d{2}-\d{2}\Z")
_RESOURCE_ID = re.compile(r"\A/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.VoiceServices/"
                          r"communicationsGateways/([^/]+)\Z", re.IGNORECASE)
# A subscription, resource group or resource name: Azure's alphabet, never ending in '.' (Azure refuses that,
# and it keeps '..' out of the URL path and of the draft's file name, which is the requested name).
_SEGMENT = re.compile(r"\A[A-Za-z0-9._()-]{0,89}[A-Za-z0-9_()-]\Z")
_SEGMENT_EXPECTED = "1-90 letters, digits, '.', '_', '-', '(' or ')', not ending in '.'"


class ArmError(Exception):
    """One failure of the ARM read; ``kind`` is a stable word (auth, forbidden, not_found, ...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclasses.dataclass
class ArmSettings:
    endpoint: str = PUBLIC_ARM_ENDPOINT
    scope: t.Optional[str] = None           # default: <endpoint>/.default
    api_version: t.Optional[str] = None     # pin; default: negotiated
    timeout: float = 30.0                   # per request (connect and read)
    verify: t.Union[bool, str] = True       # False, True or a CA bundle path
    max_retries: int = 3                    # extra attempts after a 429 or 503 with Retry-After
    max_retry_wait: float = 60.0            # total seconds spent waiting on Retry-After

    @property
    def token_scope(self) -> str:
        return self.scope or self.endpoint.rstrip("/") + "/.default"


def resource_id(subscription_id: t.Optional[str], resource_group: t.Optional[str], name: t.Optional[str],
                given_id: t.Optional[str]) -> str:
    """The canonical resource id from its parts or as given; ArmError(kind="options") when unusable."""
    if given_id:
        match = _RESOURCE_ID.match(given_id.rstrip("/"))
        if not match:
            raise ArmError("options", "resource_id %r is not the id of an ACG resource; expected "
                           "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.VoiceServices/"
                           "communicationsGateways/<name>" % given_id)
        for key, value in zip(("subscription", "resource group", "name"), match.groups()):
            if not _SEGMENT.match(value):
                raise ArmError("options", "resource_id %r: the %s %r is not a valid Azure name; expected %s"
                               % (given_id, key, value, _SEGMENT_EXPECTED))
        return given_id.rstrip("/")
    parts = {"subscription_id": subscription_id, "resource_group": resource_group, "name": name}
    missing = [key for key, value in parts.items() if not value]
    if missing:
        raise ArmError("options", "%s missing: give resource_id, or subscription_id, resource_group and name"
                       % ", ".join(missing))
    for key, value in parts.items():
        if not _SEGMENT.match(str(value)):
            raise ArmError("options", "%s %r is not a valid Azure name; expected %s" % (key, value, _SEGMENT_EXPECTED))
    return "/subscriptions/%s/resourceGroups/%s/providers/%s/%s/%s" % (
        subscription_id, resource_group, PROVIDER, RESOURCE_TYPE, name)


def resource_name(rid: str) -> str:
    """The resource name of a canonical id from ``resource_id`` (its last segment)."""
    return rid.rsplit("/", 1)[1]


def check_answer_is_the_resource(body: t.Mapping[str, t.Any], rid: str) -> None:
    """ARM's answer must be the resource asked for: its ``id`` and ``name`` equal the request's (ARM ids
    are case-insensitive). Anything else (another resource, an id or name carrying a newline or a path)
    is an ArmError(kind="mismatch"), so that nothing of it reaches a draft, a file name or a message unasked."""
    answered_id, answered_name = body.get("id"), body.get("name")
    for field, answered, asked in (("id", answered_id, rid), ("name", answered_name, resource_name(rid))):
        if not isinstance(answered, str) or answered.lower() != asked.lower():
            raise ArmError("mismatch", "ARM answered with another resource than the one asked for: the answer's %s "
                           "is %s; expected %r (the resource read, %s)" % (field, _shown(answered), asked, rid))


def _shown(value: t.Any) -> str:
    """A value from ARM shown on one line, control and non-ASCII characters escaped, at most 200 characters."""
    text = repr(value).encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= 200 else text[:197] + "..."


def newest_stable(versions: t.Iterable[t.Any]) -> t.Optional[str]:
    """The newest plain YYYY-MM-DD api-version (previews never)."""
    stable = [v for v in versions if isinstance(v, str) and _STABLE.match(v)]
    return max(stable) if stable else None


def advertised_versions(body: t.Any) -> list[str]:
    """The api-versions the provider document lists for communicationsGateways."""
    types = body.get("resourceTypes") if isinstance(body, dict) else None
    for entry in types if isinstance(types, list) else []:
        if isinstance(entry, dict) and str(entry.get("resourceType", "")).lower() == RESOURCE_TYPE.lower():
            versions = entry.get("apiVersions")
            return [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []
    return []


def _arm_code(body: t.Any) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return "%s: %s" % (error.get("code", "?"), error.get("message", ""))
    return ""


def status_error(status: int, body: t.Any, what: str, attempts: int = 1, waited: float = 0.0) -> ArmError:
    """The one clear message for an HTTP error status of ARM."""
    detail = _arm_code(body)
    detail = " (ARM said %s)" % detail if detail else ""
    if status == 401:
        return ArmError("auth", "authentication failed: ARM refused the token for %s with 401%s; check the "
                        "tenant, the credential and the token scope (arm_endpoint/token_scope for sovereign "
                        "clouds)" % (what, detail))
    if status == 403:
        return ArmError("forbidden", "forbidden (403) reading %s%s: the identity needs the Reader role on the "
                        "ACG resource (Microsoft.VoiceServices/communicationsGateways/read)" % (what, detail))
    if status == 404:
        return ArmError("not_found", "not found (404): %s does not exist or is not visible to this identity%s; "
                        "check subscription_id, resource_group and name" % (what, detail))
    if status == 429:
        return ArmError("throttled", "throttled (429): ARM still refused %s after %d attempt(s) and %.1f s of "
                        "Retry-After waits%s; try again later" % (what, attempts, waited, detail))
    if status >= 500:
        return ArmError("server", "Azure Resource Manager failed with %d reading %s%s; retry later or check "
                        "Azure status" % (status, what, detail))
    return ArmError("http", "unexpected HTTP %d reading %s%s" % (status, what, detail))


def retry_after(headers: t.Mapping[str, str]) -> t.Optional[float]:
    """Seconds from a Retry-After header (delta-seconds only; ARM sends those), or None."""
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class ArmReader:
    """GET requests to ARM with one credential; ``get_json(path, api_version)`` -> parsed JSON body."""

    def __init__(self, settings: ArmSettings, credential: t.Any,
                 sleep: t.Callable[[float], None] = time.sleep) -> None:
        from azure.core.pipeline import Pipeline
        from azure.core.pipeline.policies import BearerTokenCredentialPolicy, HeadersPolicy, UserAgentPolicy
        from azure.core.pipeline.transport import RequestsTransport

        self.settings = settings
        self._sleep = sleep
        policies = [HeadersPolicy({"Accept": "application/json"}),
                    UserAgentPolicy(user_agent="commsgw.routing-acg_resource_info"),
                    BearerTokenCredentialPolicy(credential, settings.token_scope)]
        self._pipeline = Pipeline(transport=RequestsTransport(), policies=policies)

    def _send(self, url: str, what: str) -> t.Any:
        from azure.core.exceptions import (ClientAuthenticationError, ServiceRequestError,
                                           ServiceResponseError)
        from azure.core.rest import HttpRequest

        try:
            response = self._pipeline.run(HttpRequest("GET", url), connection_timeout=self.settings.timeout,
                                          read_timeout=self.settings.timeout,
                                          connection_verify=self.settings.verify).http_response
        except ClientAuthenticationError as exc:
            raise ArmError("auth", "authentication failed: no token for scope %s: %s. Set AZURE_TENANT_ID, "
                           "AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or use a managed identity, az login, or "
                           "access_token)" % (self.settings.token_scope, _one_line(exc)))
        except (ServiceRequestError, ServiceResponseError) as exc:
            text = str(exc)
            if "SSL" in text or "CERTIFICATE" in text.upper():
                raise ArmError("tls", "TLS failure talking to %s: %s; check the endpoint's certificate or give "
                               "its CA in ca_path" % (self.settings.endpoint, _first_line(exc)))
            if "timed out" in text.lower() or "timeout" in type(exc).__name__.lower():
                raise ArmError("timeout", "no answer from %s within %s s reading %s"
                               % (self.settings.endpoint, self.settings.timeout, what))
            raise ArmError("connection", "cannot reach %s reading %s: %s"
                           % (self.settings.endpoint, what, _first_line(exc)))
        try:
            body = response.json() if response.text() else None
        except ValueError:
            body = None
        return response.status_code, dict(response.headers), body

    def get_json(self, path: str, api_version: str, what: str) -> t.Any:
        """GET ``path``; waits out 429 (and 503) Retry-After within the bounds of the settings."""
        url = "%s%s?api-version=%s" % (self.settings.endpoint.rstrip("/"), path, api_version)
        waited = 0.0
        attempts = 0
        while True:
            attempts += 1
            status, headers, body = self._send(url, what)
            if status == 200:
                if body is None:
                    raise ArmError("shape", "ARM answered 200 without a JSON body reading %s" % what)
                return body
            delay = retry_after(headers) if status in (429, 503) else None
            if status == 429 and delay is None:
                delay = 1.0
            if (delay is None or attempts > self.settings.max_retries
                    or waited + delay > self.settings.max_retry_wait):
                raise status_error(status, body, what, attempts, waited)
            self._sleep(delay)
            waited += delay


def _one_line(exc: BaseException, limit: int = 700) -> str:
    """The whole text of an exception on one line (credential chains explain themselves over several)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def negotiate_api_version(reader: ArmReader) -> tuple[t.Optional[str], list[str]]:
    """(newest stable api-version the provider advertises or None, the advertised list)."""
    try:
        body = reader.get_json("/providers/" + PROVIDER, PROVIDERS_API_VERSION, "the %s provider" % PROVIDER)
    except ArmError as exc:
        if exc.kind in ("auth", "tls", "timeout", "connection"):
            raise
        return None, []
    versions = advertised_versions(body)
    return newest_stable(versions), versions


def read_resource(reader: ArmReader, rid: str) -> tuple[dict[str, t.Any], str]:
    """(resource body, api-version used). A pin is used as is; else the negotiated version, else the
    fallbacks in order (the next one on a 400, which is how ARM refuses an unknown api-version)."""
    if reader.settings.api_version:
        candidates: t.Sequence[str] = [reader.settings.api_version]
    else:
        newest, dummy = negotiate_api_version(reader)
        candidates = [newest] if newest else list(FALLBACK_API_VERSIONS)
    last: t.Optional[ArmError] = None
    for version in candidates:
        try:
            body = reader.get_json(rid, version, "ACG resource %s" % rid)
        except ArmError as exc:
            if exc.kind == "http" and "HTTP 400" in exc.message:
                last = exc
                continue
            raise
        if not isinstance(body, dict):
            raise ArmError("shape", "unknown shape at $: the ACG resource is not a JSON object (api-version %s)"
                           % version)
        return body, version
    raise last or ArmError("options", "no api-version to try")
