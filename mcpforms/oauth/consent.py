"""The consent page, and the page where a user sees and revokes the assistants connected to their account.

The consent page is django-oauth-toolkit's ``AuthorizationView`` with a page people can judge: who is asking
(a client that registered itself chose its own name, so the name is marked unverified; a client metadata
document is vouched for by its host), where the browser goes next (with a warning when that is an app on
this computer: any local program can listen on a loopback port or claim a URL scheme), which endpoint, what
it may do there, and who is signed in. Signing in is the project's own (``LOGIN_URL``), through the
toolkit's ``LoginRequiredMixin``. The page cannot be framed (a framed consent button is a clickjacking
target) and carries no CSP ``form-action``: Chromium applies it to every redirect after the form's POST,
and the chain ends at the client's redirect URI, which can go on to a ``claude://`` link.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.views import View
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from oauth2_provider.scopes import get_scopes_backend
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView as ToolkitAuthorizationView

from mcpforms.conf import conf
from mcpforms.oauth.metadata import issuer, with_issuer

SWITCH_USER = "mcpforms_switch_user"
"""The POST field of the consent page's "Not you?" button."""

NOT_FRAMED = "frame-ancestors 'none'"
_CSP_MIDDLEWARE = "django.middleware.csp.ContentSecurityPolicyMiddleware"  # Django 6.0+
_LOOPBACK_NAMES = {"localhost"}


# Who is asking, and where the answer goes -----------------------------------------------------------------


@dataclass(frozen=True)
class Client:
    """What the pages say about an OAuth client: its name and how much of it the site could check."""

    name: str
    source: str  # "cimd", "dcr" or "manual": the toolkit's Application.RegistrationSource
    host: str  # the host that publishes a client metadata document; "" for the others

    @property
    def unverified(self) -> bool:
        """A client that registered itself (RFC 7591) named itself: nobody vouches for the name."""
        return self.source == "dcr"


def client_of(application: Any) -> Client:
    source = str(application.registration_source)
    host = ""
    if source == "cimd":
        # The client id is the https URL of its metadata document: its host answers for the document.
        host = urlsplit(application.client_id).hostname or ""
    return Client(name=application.name or host or application.client_id, source=source, host=host)


@dataclass(frozen=True)
class Destination:
    """Where the browser is sent after the answer: a web site, or a program on the user's own machine."""

    shown: str  # "claude.ai", "127.0.0.1:8976", "cursor: links"
    on_this_computer: bool


def destination_of(redirect_uri: str) -> Destination:
    parts = urlsplit(redirect_uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        # A private-use scheme (RFC 8252 §7.1): whichever app on the device registered it receives the code.
        return Destination(shown=f"{scheme}: links", on_this_computer=True)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:
        port = None
    shown = f"[{host}]" if ":" in host else host
    if port is not None:
        shown = f"{shown}:{port}"
    return Destination(shown=shown, on_this_computer=is_loopback(host))


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this computer (RFC 8252 §7.3; ``localhost`` per RFC 6761 §6.3)."""
    host = host.lower().rstrip(".")
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def endpoints_authorised(resource: str | None) -> list[str]:
    """The MCP endpoints a token will be for: the ``resource`` indicators asked for (RFC 8707), else the
    site's endpoint, which the authorization server binds a token without one to."""
    if resource:
        return resource.split()
    base = conf.BASE_URL
    try:
        location = reverse("mcpforms:mcp")
    except NoReverseMatch:
        return []
    if isinstance(base, str) and base:
        return [base.rstrip("/") + location]
    return [location]


def describe_scopes(scopes: Iterable[str]) -> list[str]:
    """Each scope as the authorization server's scopes backend describes it to a person."""
    known = get_scopes_backend().get_all_scopes()
    return [str(known.get(scope, scope)) for scope in scopes]


# Not framed, and no form-action ---------------------------------------------------------------------------


def protect(response: HttpResponseBase) -> None:
    """No site may frame the page, and no CSP ``form-action`` follows the consent's redirect chain.

    ``X-Frame-Options`` is the legacy spelling; CSP ``frame-ancestors`` the current one (CSP Level 2 §7.7).
    A project with Django 6's CSP middleware and ``SECURE_CSP`` keeps its policy here, with
    ``frame-ancestors`` added and ``form-action`` removed: the middleware builds the header from the
    config a view leaves on the response. (``mcpforms.views``' URL-mode page keeps the project's
    ``form-action``: its form posts to itself and is answered with a page, not a redirect.)
    """
    response["X-Frame-Options"] = "DENY"
    policy = getattr(settings, "SECURE_CSP", None)
    report_only = getattr(settings, "SECURE_CSP_REPORT_ONLY", None)
    if _CSP_MIDDLEWARE in settings.MIDDLEWARE and isinstance(policy, dict) and policy:
        response._csp_config = {**_without_form_action(policy), "frame-ancestors": ["'none'"]}  # type: ignore[attr-defined]
    elif "Content-Security-Policy" not in response:
        response["Content-Security-Policy"] = NOT_FRAMED
    if _CSP_MIDDLEWARE in settings.MIDDLEWARE and isinstance(report_only, dict) and report_only:
        response._csp_ro_config = _without_form_action(report_only)  # type: ignore[attr-defined]
    add_never_cache_headers(response)  # it holds a CSRF token and the request's details


def _without_form_action(policy: dict[str, Any]) -> dict[str, Any]:
    return {directive: value for directive, value in policy.items() if directive != "form-action"}


# The consent page ------------------------------------------------------------------------------------------


class AuthorizationView(ToolkitAuthorizationView):  # type: ignore[misc]
    """The authorization endpoint (RFC 6749 §3.1) with mcpforms' consent page,
    ``mcpforms/oauth/authorize.html``."""

    template_name = "mcpforms/oauth/authorize.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)
        protect(response)  # every answer: the page, its errors, the login redirect, the 302 to the client
        return response

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if oauth2_settings.REQUEST_APPROVAL_PROMPT == "force" and "approval_prompt" in request.GET:
            # The toolkit lets the client's ``approval_prompt=auto`` skip the page when an earlier token
            # exists; consent every time is the site's decision, not the client's.
            params = request.GET.copy()
            del params["approval_prompt"]
            request.GET = params  # type: ignore[assignment]  # what the toolkit reads the prompt from
        response: HttpResponseBase = super().get(request, *args, **kwargs)
        return response

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if SWITCH_USER in request.POST:
            # "Not you?": sign out, then back to this same request through the site's login.
            logout(request)
            return redirect_to_login(
                request.get_full_path(), self.get_login_url(), self.get_redirect_field_name()
            )
        response: HttpResponseBase = super().post(request, *args, **kwargs)
        return response

    def redirect(self, redirect_to: str, application: Any) -> HttpResponseBase:
        # Every answer that goes back to the client: the code, and each error the toolkit redirects with
        # (Cancel's access_denied, invalid_target, a PKCE or scope refusal, prompt=none's login_required).
        # RFC 9207 §2 asks the iss parameter of all of them; the toolkit adds it to the code only, and a
        # client that read authorization_response_iss_parameter_supported drops an answer without it.
        published = issuer()
        if published is not None and oauth2_settings.COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS:
            redirect_to = with_issuer(redirect_to, published)
        response: HttpResponseBase = super().redirect(redirect_to, application)
        return response

    def form_valid(self, form: Any) -> HttpResponseBase:
        # The hidden fields come back from the browser. A client id that names no client is refused here
        # (the toolkit would raise DoesNotExist, a 500), and so is a redirect URI the client did not
        # register: oauthlib checks it when the user allows, but the toolkit redirects Cancel's
        # access_denied, and a refused resource's invalid_target, to the URI as posted (RFC 6749 §4.1.2.1:
        # never to an invalid one).
        application = get_application_model().objects.filter(client_id=form.cleaned_data["client_id"]).first()
        if application is None or not application.redirect_uri_allowed(form.cleaned_data["redirect_uri"]):
            return self.form_invalid(form)
        response: HttpResponseBase = super().form_valid(form)
        return response

    def form_invalid(self, form: Any) -> HttpResponse:
        response: HttpResponse = self.render_to_response(self.get_context_data(form=form), status=400)
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        application = kwargs.get("application")
        if application is not None:  # the consent itself, not an error page
            context["client"] = client_of(application)
            context["destination"] = destination_of(kwargs["redirect_uri"])
            context["endpoints"] = endpoints_authorised(kwargs.get("resource"))
            context["switch_user"] = SWITCH_USER
        return context


# Connected assistants --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConnectedAssistant:
    application: Any
    client: Client
    last_active: datetime | None  # when it last got a token: signing in, or refreshing
    scopes: list[str]  # what it may do, as described to a person


def connected_assistants(user: Any) -> list[ConnectedAssistant]:
    """The clients holding a usable token of ``user``: an unexpired access token or a live refresh token."""
    now = timezone.now()
    access_tokens = get_access_token_model().objects.filter(user=user, application__isnull=False)
    live = set(access_tokens.filter(expires__gt=now).values_list("application_id", flat=True))
    live |= set(_live_refresh_tokens(user).values_list("application_id", flat=True))
    if not live:
        return []
    last_active: dict[int, datetime] = {}
    scopes: dict[int, set[str]] = {}
    for application_id, created, scope in access_tokens.filter(application_id__in=live).values_list(
        "application_id", "created", "scope"
    ):
        last_active[application_id] = max(created, last_active.get(application_id, created))
        scopes.setdefault(application_id, set()).update(scope.split())
    applications = get_application_model().objects.filter(pk__in=live)
    found = [
        ConnectedAssistant(
            application=application,
            client=client_of(application),
            last_active=last_active.get(application.pk),
            scopes=describe_scopes(sorted(scopes.get(application.pk, ()))),
        )
        for application in applications
    ]
    return sorted(found, key=lambda each: each.last_active or now, reverse=True)


def _live_refresh_tokens(user: Any) -> Any:
    tokens = get_refresh_token_model().objects.filter(user=user, revoked__isnull=True)
    lifetime = oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS
    if lifetime:
        tokens = tokens.filter(created__gt=timezone.now() - timedelta(seconds=lifetime))
    return tokens


def revoke_assistant(user: Any, application: Any) -> int:
    """End everything ``application`` holds of ``user``: refresh tokens (revoked, kept as the tombstones
    reuse detection reads), access tokens and unused authorization codes. Returns how many there were."""
    with transaction.atomic():
        refresh_tokens = list(
            get_refresh_token_model().objects.filter(user=user, application=application, revoked__isnull=True)
        )
        for refresh_token in refresh_tokens:
            refresh_token.revoke()  # deletes its access token too
        access_tokens, _ = (
            get_access_token_model().objects.filter(user=user, application=application).delete()
        )
        codes, _ = get_grant_model().objects.filter(user=user, application=application).delete()
    return len(refresh_tokens) + int(access_tokens) + int(codes)


def _chosen_application(value: str) -> Any:
    """The application a revoke button names by its primary key, or None when ``value`` names none."""
    model = get_application_model()
    try:
        # The model's own reading of its key (any swapped model's): text that is no key is no
        # application, however it fails (int() refuses more than 4,300 digits with a ValueError).
        key = model._meta.pk.to_python(value)
    except ValidationError:
        return None
    return model.objects.filter(pk=key).first()


class ConnectedAssistantsView(LoginRequiredMixin, View):
    """The signed-in user's connected assistants (``mcpforms/oauth/connected.html``), each with a revoke
    button that ends its access."""

    template_name = "mcpforms/oauth/connected.html"
    http_method_names = ["get", "post"]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)
        protect(response)  # a revoke button is worth clickjacking too
        return response

    def get(self, request: HttpRequest) -> HttpResponse:
        context = {"assistants": connected_assistants(request.user), "title": "Connected assistants"}
        return render(request, self.template_name, context)

    def post(self, request: HttpRequest) -> HttpResponseRedirect:
        application = _chosen_application(request.POST.get("application", ""))
        # Only the user's own tokens are touched: an id of another user's assistant revokes nothing.
        revoked = revoke_assistant(request.user, application) if application is not None else 0
        if revoked:
            text = f"No longer connected: {client_of(application).name}. It has to ask you again to sign in."
            messages.success(request, text, fail_silently=True)
        else:
            messages.info(request, "That assistant was not connected to your account.", fail_silently=True)
        return HttpResponseRedirect(request.path)
