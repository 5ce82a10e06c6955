"""How OAuth clients identify themselves: Client ID Metadata Documents (``mcpforms.oauth.cimd``) and dynamic
registration (``mcpforms.oauth.dcr``, RFC 7591), each resolved or registered through mcpforms' rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from mcpforms.checks.common import invalid_values, settings_check, toolkit_installed
from mcpforms.conf import SETTINGS, Section, user_settings

# Client ID Metadata Documents ------------------------------------------------------------------------------


@settings_check(Tags.security)
def check_cimd_settings(configured: dict[str, Any]) -> list[CheckMessage]:
    """The CIMD keys are well formed, and django-oauth-toolkit resolves documents through mcpforms."""
    invalid = invalid_values(configured, Section.OAUTH_CIMD)
    messages = list(invalid.values())
    if not toolkit_installed():
        return messages
    pins_ok = "OAUTH_CIMD_PINNED" not in invalid
    if pins_ok and (unusable := _unusable_pin(configured.get("OAUTH_CIMD_PINNED"))) is not None:
        pinned = SETTINGS["OAUTH_CIMD_PINNED"]
        messages.append(
            Error(f"MCPFORMS['OAUTH_CIMD_PINNED'] {unusable}.", hint=pinned.hint, id=pinned.check)
        )
        pins_ok = False
    return messages + _cimd_wiring(check_pins="OAUTH_CIMD_HOSTS" not in invalid and pins_ok)


def _unusable_pin(pins: dict[str, dict[str, Any]] | None) -> str | None:
    """A pinned document django-oauth-toolkit would refuse (its shape is the setting's row's to judge)."""
    from oauth2_provider.cimd import CIMDError  # optional: mcpforms[oauth]

    from mcpforms.oauth.cimd import normalise

    for client_id, document in (pins or {}).items():
        try:
            normalise(document)
        except CIMDError as error:
            return f"has a document for {client_id!r} that cannot be used: {error}"
    return None


def _cimd_wiring(*, check_pins: bool) -> list[CheckMessage]:
    """With CIMD on, documents are fetched by mcpforms' fetcher, only where a signed-in user asks."""
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    import mcpforms.oauth.cimd as cimd

    if not oauth2_settings.CIMD_ENABLED:
        return []
    messages: list[CheckMessage] = []
    try:
        permissions = list(oauth2_settings.CIMD_REGISTRATION_PERMISSION_CLASSES)
        backend = oauth2_settings.OAUTH2_BACKEND_CLASS
        fetcher = oauth2_settings.CIMD_METADATA_FETCHER
    except ImportError:
        return []  # a dotted path that does not import fails loudly at the first request anyway
    if permissions and not any(issubclass(cls, cimd.ResolutionPermission) for cls in permissions):
        messages.append(
            Warning(
                "CIMD documents can be resolved from the anonymous token endpoint: anyone can make the "
                "server fetch a URL and store an OAuth application for it.",
                hint="Set OAUTH2_PROVIDER['CIMD_REGISTRATION_PERMISSION_CLASSES'] to "
                "['mcpforms.oauth.cimd.ResolutionPermission'] (mcpforms.oauth.settings() does).",
                id="mcpforms.W320",
            )
        )
    elif permissions and not issubclass(backend, cimd.SignedInAuthorization):
        messages.append(
            Error(
                "mcpforms.oauth.cimd.ResolutionPermission resolves no CIMD document with this "
                "OAUTH2_BACKEND_CLASS: nothing tells it a signed-in user is authorizing, so every assistant "
                "signing in with a client ID metadata document is an unknown client.",
                hint="Set OAUTH2_PROVIDER['OAUTH2_BACKEND_CLASS'] to 'mcpforms.oauth.cimd.Backend', or mix "
                "mcpforms.oauth.cimd.SignedInAuthorization into your own backend.",
                id="mcpforms.E312",
            )
        )
    if not issubclass(fetcher, cimd.Fetcher):
        messages.append(
            Warning(
                "OAUTH2_PROVIDER['CIMD_METADATA_FETCHER'] is not mcpforms.oauth.cimd.Fetcher: claude.ai's "
                "and ChatGPT's documents are refused as they publish them, nothing falls back to a pinned "
                "copy, and a slow document body can hold a worker far beyond CIMD_FETCH_TIMEOUT_SECONDS.",
                hint="Set it to 'mcpforms.oauth.cimd.Fetcher', or a subclass.",
                id="mcpforms.W321",
            )
        )
    if check_pins:
        unused = [client_id for client_id in cimd.pinned_documents() if not cimd.host_allowed(client_id)]
        if unused:
            messages.append(
                Warning(
                    f"MCPFORMS['OAUTH_CIMD_HOSTS'] refuses the host of the pinned {', '.join(unused)}: those "
                    "clients are never resolved, so their pins are never used.",
                    hint="Add their hosts to OAUTH_CIMD_HOSTS, or leave them out of OAUTH_CIMD_PINNED.",
                    id="mcpforms.W322",
                )
            )
    return messages


# Dynamic client registration -------------------------------------------------------------------------------


@settings_check(Tags.security)
def check_dcr_settings(configured: dict[str, Any]) -> list[CheckMessage]:
    """The registration settings' values, and that django-oauth-toolkit registers clients through
    mcpforms' rules when it registers them at all."""
    invalid = invalid_values(configured, Section.OAUTH_DCR)
    messages = list(invalid.values())
    if toolkit_installed() and "OAUTH_DCR" not in invalid:
        schemes = configured.get("OAUTH_REDIRECT_SCHEMES", SETTINGS["OAUTH_REDIRECT_SCHEMES"].default)
        enabled = configured.get("OAUTH_DCR", SETTINGS["OAUTH_DCR"].default)
        messages += _dcr_wiring(enabled, [] if "OAUTH_REDIRECT_SCHEMES" in invalid else schemes)
    return messages


def _registers_through_mcpforms() -> bool:
    """Whether the toolkit's registration permissions include mcpforms' throttle and cap."""
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    from mcpforms.oauth.dcr import RegistrationPermission

    try:
        permissions = list(oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES)
    except ImportError:
        return False  # the toolkit reports its own unimportable setting at the first registration
    return any(isinstance(p, type) and issubclass(p, RegistrationPermission) for p in permissions)


def _dcr_wiring(enabled: bool, schemes: Sequence[str]) -> list[CheckMessage]:
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    if not oauth2_settings.DCR_ENABLED:
        return []  # nothing registers; metadata advertises no registration endpoint
    if not enabled:
        return [
            Warning(
                "MCPFORMS['OAUTH_DCR'] is False but OAUTH2_PROVIDER['DCR_ENABLED'] is True: the metadata "
                "advertises a registration endpoint that answers 404, so clients that register (Cursor, "
                "mcp-remote, Claude without CIMD) fail instead of using another way.",
                hint="Set OAUTH2_PROVIDER['DCR_ENABLED'] = False too, or MCPFORMS['OAUTH_DCR'] = True.",
                id="mcpforms.W325",
            )
        ]
    messages: list[CheckMessage] = []
    if not _registers_through_mcpforms():
        messages.append(
            Warning(
                "OAUTH2_PROVIDER['DCR_REGISTRATION_PERMISSION_CLASSES'] lacks "
                "mcpforms.oauth.dcr.RegistrationPermission: registration is either open without a limit per "
                "address or on never-used clients, or closed to the anonymous registrations hosted "
                "assistants make.",
                hint="Use mcpforms.oauth.settings(), or add "
                "'mcpforms.oauth.dcr.RegistrationPermission' to the list.",
                id="mcpforms.W323",
            )
        )
    allowed = {scheme.lower() for scheme in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES}
    if missing := [scheme for scheme in schemes if scheme.lower() not in allowed]:
        messages.append(
            Warning(
                f"MCPFORMS['OAUTH_REDIRECT_SCHEMES'] allows {', '.join(map(repr, missing))}, which "
                "django-oauth-toolkit does not redirect to: such redirect URIs are dropped at registration "
                "(Cursor's cursor:// callback among them).",
                hint="Add them to OAUTH2_PROVIDER['ALLOWED_REDIRECT_URI_SCHEMES'] (mcpforms.oauth.settings() "
                "does), or remove them from OAUTH_REDIRECT_SCHEMES.",
                id="mcpforms.W324",
            )
        )
    return messages


@register(Tags.security, Tags.caches, deploy=True)
def check_dcr_counter(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """With more than one worker, the per-address registration limit counts in a cache they all share.

    A deployment check: ``runserver`` is one process, and a LocMemCache serves it well.
    """
    configured = user_settings()
    if not isinstance(configured, dict) or not toolkit_installed() or not _counts_per_address(configured):
        return []
    from django.core.cache.backends.dummy import DummyCache
    from django.core.cache.backends.locmem import LocMemCache

    cache = caches[DEFAULT_CACHE_ALIAS]
    if isinstance(cache, LocMemCache):
        what = (
            "a LocMemCache: each worker process counts for itself, so one address registers that many "
            "clients an hour per worker"
        )
    elif isinstance(cache, DummyCache):
        what = "a DummyCache, which keeps nothing: no address is ever refused"
    else:
        return []
    return [
        Warning(
            "Dynamic registration counts MCPFORMS['OAUTH_DCR_PER_ADDRESS'] in Django's default cache, "
            f"{what}.",
            hint="Give CACHES['default'] a cache every worker shares (Redis, Memcached, the database), or "
            "set OAUTH_DCR_PER_ADDRESS to None where something in front of the site limits registrations.",
            id="mcpforms.W327",
        )
    ]


def _counts_per_address(configured: dict[str, Any]) -> bool:
    """Whether registration is open and mcpforms limits it per address."""
    from oauth2_provider.settings import oauth2_settings  # optional: mcpforms[oauth]

    enabled = (
        configured.get("OAUTH_DCR", SETTINGS["OAUTH_DCR"].default) is True and oauth2_settings.DCR_ENABLED
    )
    limit = configured.get("OAUTH_DCR_PER_ADDRESS", SETTINGS["OAUTH_DCR_PER_ADDRESS"].default)
    return bool(enabled) and limit is not None and _registers_through_mcpforms()
