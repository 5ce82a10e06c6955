"""URL-mode elicitation (spec §7.3) end to end through Django's test client: the MCP call hands out a link,
the user fills the Django page, the tool's retry returns the outcome. Tokens: tamper, reuse, expiry."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from django import forms
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

import mcpforms
from mcpforms.models import UrlElicitation
from mcpforms.protocol.server import default_server
from mcpforms.registry import register, registry_for
from mcpforms.url_mode import dump_page_token
from tests.core_client import CoreClient, assert_unknown_tool, page_path, text, url_request
from tests.forms import SignupForm

pytestmark = pytest.mark.django_db

SECRET = "correct horse battery staple"
URL_CAPABLE: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
SETTINGS = {"BASE_URL": "http://testserver"}
received: list[dict[str, Any]] = []


class VaultForm(forms.Form):
    """Unlock a vault."""

    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput, min_length=8)


class UploadForm(forms.Form):
    title = forms.CharField()
    attachment = forms.FileField()


class LoginForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


@pytest.fixture(autouse=True)
def tools() -> Iterator[None]:
    received.clear()

    def unlock(request: Any, form: forms.BaseForm) -> str:
        received.append(dict(form.cleaned_data))
        return f"Vault unlocked for {form.cleaned_data['username']}."

    def upload(request: Any, form: forms.BaseForm) -> dict[str, Any]:
        attachment = form.cleaned_data["attachment"]
        return {"title": form.cleaned_data["title"], "bytes": attachment.size, "name": attachment.name}

    mcpforms.tool(VaultForm, name="vault")(unlock)
    mcpforms.tool(UploadForm, name="upload")(upload)
    register(LoginForm, name="login")  # the default handler: it echoes the cleaned data
    register(SignupForm, name="signup_page", path="url")
    with override_settings(MCPFORMS=SETTINGS):
        yield
    for name in ("vault", "upload", "login", "signup_page"):
        registry_for(default_server).unregister(name)


def mcp(user: Any = None, capabilities: dict[str, Any] | None = None) -> CoreClient:
    return CoreClient(
        default_server, capabilities=URL_CAPABLE if capabilities is None else capabilities, user=user
    )


def retry(
    client: CoreClient, name: str, arguments: dict[str, Any], first: dict[str, Any], action: str = "accept"
):
    return client.call(
        name, arguments, inputResponses={name: {"action": action}}, requestState=first["requestState"]
    )


def test_a_password_form_goes_through_the_page_and_the_retry_returns_the_outcome(caplog):
    caplog.set_level(logging.DEBUG)
    client = mcp()
    first = client.call("vault", {"username": "ada"})
    params = url_request(first, "vault")
    assert "a password" in params["message"]

    browser = Client()
    path = page_path(first, "vault")
    page = browser.get(path)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="username" value="ada"' in html  # prefilled with what the model passed
    assert 'type="password"' in html and "csrfmiddlewaretoken" in html

    # Not completed yet: the retry asks again, with a link to the same page.
    again = retry(client, "vault", {"username": "ada"}, first)
    assert page_path(again, "vault").startswith("/mcpforms/fill/")
    assert UrlElicitation.objects.count() == 1

    short = browser.post(path, {"username": "ada", "password": "short"})
    assert short.status_code == 400
    html = short.content.decode()
    assert 'aria-describedby="id_password_error"' in html
    assert 'id="id_password_error" role="alert"><p>Ensure this value has at least 8 characters' in html
    assert received == []

    done = browser.post(path, {"username": "ada", "password": SECRET})
    assert done.status_code == 200
    assert "Submitted." in done.content.decode()
    assert received == [{"username": "ada", "password": SECRET}]

    final = retry(client, "vault", {"username": "ada"}, first)
    assert final["resultType"] == "complete"
    assert text(final) == "Vault unlocked for ada."
    assert received == [{"username": "ada", "password": SECRET}]  # the retry did not run the handler again

    # The secret never reached the MCP side: not in any result, state, stored row nor log line.
    for wire in (first, again, final):
        assert SECRET not in str(wire)
    assert SECRET not in str(list(UrlElicitation.objects.values()))
    assert SECRET not in caplog.text


def test_the_link_works_once():
    first = mcp().call("vault", {"username": "ada"})
    path = page_path(first, "vault")
    browser = Client()
    assert browser.post(path, {"username": "ada", "password": SECRET}).status_code == 200
    reused = browser.post(path, {"username": "eve", "password": "other password"})
    assert reused.status_code == 410
    assert "already submitted" in reused.content.decode()
    assert browser.get(path).status_code == 410
    assert received == [{"username": "ada", "password": SECRET}]


def test_a_tampered_link_is_refused():
    path = page_path(mcp().call("vault", {}), "vault")
    token = path.rstrip("/").rsplit("/", 1)[1]
    tampered = path.replace(token, token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    response = Client().get(tampered)
    assert response.status_code == 400
    assert "This link is not valid." in response.content.decode()
    assert Client().get("/mcpforms/fill/not-a-token/").status_code == 400


def test_a_token_for_another_tool_is_refused():
    first = mcp().call("vault", {})
    row = UrlElicitation.objects.get()
    forged = dump_page_token(
        elicitation=str(row.pk), server=row.server, tool="upload", principal=row.principal
    )
    assert Client().get(f"/mcpforms/fill/{forged}/").status_code == 404
    assert Client().get(page_path(first, "vault")).status_code == 200


def test_an_expired_link_is_refused():
    path = page_path(mcp().call("vault", {}), "vault")
    later = time.time() + 901
    with mock.patch("django.core.signing.time.time", return_value=later):
        response = Client().get(path)
    assert response.status_code == 410
    assert "expired" in response.content.decode()
    longer = override_settings(MCPFORMS={**SETTINGS, "URL_MODE_MAX_AGE": 2000})
    with longer, mock.patch("django.core.signing.time.time", return_value=later):
        assert Client().get(path).status_code == 200


def test_the_link_is_bound_to_the_principal():
    ada = User.objects.create_user("ada")
    eve = User.objects.create_user("eve")
    path = page_path(mcp(user=ada).call("vault", {}), "vault")
    assert Client().get(path).status_code == 403  # anonymous
    browser = Client()
    browser.force_login(eve)
    response = browser.get(path)
    assert response.status_code == 403
    assert "belongs to another user" in response.content.decode()
    browser.force_login(ada)
    assert browser.get(path).status_code == 200


def test_a_retry_by_another_principal_cannot_read_the_outcome():
    ada = User.objects.create_user("ada")
    first = mcp(user=ada).call("vault", {"username": "ada"})
    browser = Client()
    browser.force_login(ada)
    browser.post(page_path(first, "vault"), {"username": "ada", "password": SECRET})
    body = mcp().send(
        "tools/call",
        {
            "name": "vault",
            "arguments": {"username": "ada"},
            "inputResponses": {"vault": {"action": "accept"}},
            "requestState": first["requestState"],
        },
    )
    assert body["error"]["code"] == -32602  # the requestState is bound to ada


def test_a_file_upload_on_the_page():
    client = mcp()
    first = client.call("upload", {"title": "Report"})
    assert "a file" in url_request(first, "upload")["message"]
    path = page_path(first, "upload")
    page = Client().get(path).content.decode()
    assert 'enctype="multipart/form-data"' in page and 'type="file"' in page
    upload = SimpleUploadedFile("report.txt", b"hello world")
    assert Client().post(path, {"title": "Report", "attachment": upload}).status_code == 200
    final = retry(client, "upload", {"title": "Report"}, first)
    assert final["structuredContent"] == {"title": "Report", "bytes": 11, "name": "report.txt"}


def test_a_url_only_form_always_uses_the_page():
    client = mcp()
    first = client.call("signup_page", {"email": "ada@example.com", "plan": "pro"})
    path = page_path(first, "signup_page")
    invalid = Client().post(path, {"email": "ada@example.invalid", "plan": "pro"})
    assert invalid.status_code == 400
    assert "That domain does not receive mail." in invalid.content.decode()
    assert Client().post(path, {"email": "ada@example.com", "plan": "pro"}).status_code == 200
    final = retry(client, "signup_page", {"email": "ada@example.com", "plan": "pro"}, first)
    assert final["structuredContent"]["email"] == "ada@example.com"


def test_the_page_confirms_what_the_user_sent_in_words_not_json():
    first = mcp().call("signup_page", {"email": "ada@example.com"})
    path = page_path(first, "signup_page")
    done = Client().post(path, {"email": "ada@example.com", "plan": "team", "newsletter": "on"})
    assert done.status_code == 200
    assert "mcpforms/url_done.html" in [template.name for template in done.templates]
    html = done.content.decode()
    assert '<h1 id="mcpforms-title">Submitted.</h1>' in html
    assert "<strong>Signup page</strong>" in html  # the tool's title
    rows = dict(re.findall(r"<dt>([^<]+)</dt>\s*<dd>(.*?)</dd>", html))
    assert rows == {
        "Email": "ada@example.com",
        "Plan": "Team",
        "Age": '<span class="empty">Not given</span>',
        "Newsletter": "Yes",
    }
    assert "You can close this page and return to your assistant." in html
    assert '"email"' not in html  # the tool's result is for the model: no raw JSON for the user


def test_the_confirmation_never_shows_the_password():
    first = mcp().call("vault", {"username": "ada"})
    done = Client().post(page_path(first, "vault"), {"username": "ada", "password": SECRET})
    html = done.content.decode()
    assert re.search(r"<dt>Username</dt>\s*<dd>ada</dd>", html)
    assert SECRET not in html and "Password" not in html
    assert "Vault unlocked" not in html


def test_a_project_overrides_the_confirmation(tmp_path):
    (tmp_path / "mcpforms").mkdir()
    (tmp_path / "mcpforms" / "url_done.html").write_text(
        "Thanks for {{ title }}: {{ result.content.0.text }}"
    )
    templates = [
        {"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [tmp_path], "APP_DIRS": True}
    ]
    first = mcp().call("vault", {"username": "ada"})
    with override_settings(TEMPLATES=templates):
        done = Client().post(page_path(first, "vault"), {"username": "ada", "password": SECRET})
    assert done.content.decode() == "Thanks for Vault: Vault unlocked for ada."


def test_the_page_shows_a_multi_select_as_checkboxes():
    class Order(forms.Form):
        toppings = forms.MultipleChoiceField(choices=[("ham", "Ham"), ("egg", "Egg")])

    register(Order, name="order", path="url")
    try:
        client = mcp()
        first = client.call("order", {"toppings": ["egg"]})
        path = page_path(first, "order")
        html = Client().get(path).content.decode()
        assert re.findall(
            r'<input type="checkbox" name="toppings" value="(\w+)"[^>]*?( checked)?>', html
        ) == [
            ("ham", ""),
            ("egg", " checked"),  # prefilled with what the model passed
        ]
        done = Client().post(path, {"toppings": ["ham", "egg"]})
        assert re.search(r"<dt>Toppings</dt>\s*<dd>Ham, Egg</dd>", done.content.decode())
        final = retry(client, "order", {"toppings": ["egg"]}, first)
        assert final["structuredContent"] == {"toppings": ["ham", "egg"]}
    finally:
        registry_for(default_server).unregister("order")


def test_the_default_handler_never_echoes_a_password():
    client = mcp()
    first = client.call("login", {"username": "ada"})
    Client().post(page_path(first, "login"), {"username": "ada", "password": SECRET})
    final = retry(client, "login", {"username": "ada"}, first)
    assert final["structuredContent"] == {"username": "ada"}
    assert SECRET not in str(final)


def test_a_page_whose_tool_is_gone_is_refused():
    path = page_path(mcp().call("vault", {}), "vault")
    registry_for(default_server).unregister("vault")
    assert Client().get(path).status_code == 404


def test_a_failing_handler_is_a_friendly_page_and_the_link_stays_usable(caplog):
    calls: list[str] = []

    class Flaky(forms.Form):
        password = forms.CharField(widget=forms.PasswordInput)

    @mcpforms.tool(Flaky, name="flaky")
    def flaky(request: Any, form: forms.BaseForm) -> str:
        calls.append("run")
        if len(calls) == 1:
            raise RuntimeError("the backend is down")
        return "Done."

    try:
        client = mcp()
        first = client.call("flaky", {})
        path = page_path(first, "flaky")
        failed = Client(raise_request_exception=False).post(path, {"password": SECRET})
        assert failed.status_code == 500
        html = failed.content.decode()
        assert "Something went wrong; nothing was submitted." in html
        assert "Traceback" not in html and "the backend is down" not in html
        assert url_request(retry(client, "flaky", {}, first), "flaky")  # not done: asked again
        assert Client().post(path, {"password": SECRET}).status_code == 200  # the claim was rolled back
        assert text(retry(client, "flaky", {}, first)) == "Done."
        assert SECRET not in caplog.text
    finally:
        registry_for(default_server).unregister("flaky")


def test_the_page_checks_the_tools_permission():
    ada = User.objects.create_user("ada")
    register(VaultForm, name="guarded", permission="auth.view_user")
    try:
        assert_unknown_tool(mcp(user=ada), "guarded")  # no permission: no tool, not even a link
        assert UrlElicitation.objects.count() == 0
        row = UrlElicitation.objects.create(tool="guarded", principal=f"user:{ada.pk}")
        token = dump_page_token(
            elicitation=str(row.pk), server=row.server, tool="guarded", principal=row.principal
        )
        browser = Client()
        browser.force_login(ada)
        response = browser.get(f"/mcpforms/fill/{token}/")
        assert response.status_code == 403
        assert "Permission denied" in response.content.decode()
    finally:
        registry_for(default_server).unregister("guarded")


def test_a_2025_session_is_sent_to_the_page_and_told_when_it_is_done():
    from mcpforms.protocol.era2025 import shim as era2025

    def send(payload: dict[str, Any], session: str | None = None) -> Any:
        return default_server.handle(payload, headers={"mcp-session-id": session} if session else {})

    opened = send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": URL_CAPABLE,
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
    )
    session = opened.headers["Mcp-Session-Id"]
    reply = send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "vault", "arguments": {"username": "ada"}},
        },
        session,
    )
    (asking,) = reply.events
    request = asking.data
    assert request["method"] == "elicitation/create" and request["params"]["mode"] == "url"
    assert request["params"]["elicitationId"] == request["id"]  # 2025-11-25 needs one
    headers = {"mcp-session-id": session}

    # The user agrees to open the page: the call waits for the page, not for the client.
    assert (
        send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}, session).status == 202
    )
    waiting = era2025.resume(default_server, headers, asking.id, None, default_server.sessions)
    assert [(event.id, event.data) for event in waiting.events or ()] == [(asking.id, None)]

    path = urlsplit(request["params"]["url"]).path
    assert Client().post(path, {"username": "ada", "password": SECRET}).status_code == 200
    resumed = era2025.resume(default_server, headers, asking.id, None, default_server.sessions)
    completed, final = resumed.events or ()
    assert completed.data == {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": request["id"]},
    }
    assert final.data is not None and final.data["id"] == 2
    assert final.data["result"]["content"][0]["text"] == "Vault unlocked for ada."
    assert received == [{"username": "ada", "password": SECRET}]  # once, by the page


def test_a_link_minted_for_nobody_never_acts_as_the_visitor_who_opens_it():
    seen: list[Any] = []

    @mcpforms.tool(LoginForm, name="whoami")
    def whoami(request: Any, form: forms.BaseForm) -> str:
        seen.append(request.user)
        return "done"

    try:
        # An anonymous MCP caller obtains a link and sends it to a signed-in staff member.
        path = page_path(mcp().call("whoami", {"username": "ada"}), "whoami")
        browser = Client()
        browser.force_login(User.objects.create_user("staff", is_staff=True))
        assert browser.post(path, {"username": "ada", "password": "pw"}).status_code == 200
        (user,) = seen
        assert not user.is_authenticated  # the handler ran as the caller it was minted for: nobody
    finally:
        registry_for(default_server).unregister("whoami")


def test_ask_always_goes_to_the_page_when_the_page_is_the_only_way_to_ask():
    register(SignupForm, name="confirm_page", ask="always", path="form")
    try:
        client = mcp(capabilities={"elicitation": {"url": {}}})
        result = client.call("confirm_page", {"email": "ada@example.com", "plan": "pro"})
        assert url_request(result, "confirm_page")["url"].startswith("http://testserver/mcpforms/fill/")
    finally:
        registry_for(default_server).unregister("confirm_page")


# The page takes passwords: it must never be framed, whatever the project's middleware ------------------


def assert_unframeable(response: Any) -> None:
    assert response["X-Frame-Options"] == "DENY", response.status_code
    assert response["Content-Security-Policy"] == "frame-ancestors 'none'", response.status_code


def test_every_answer_of_the_page_forbids_framing_without_the_projects_middleware():
    from django.conf import settings

    # What the page does on its own: these settings have no clickjacking middleware to lean on.
    assert "django.middleware.clickjacking.XFrameOptionsMiddleware" not in settings.MIDDLEWARE
    ada = User.objects.create_user("ada")
    path = page_path(mcp(user=ada).call("vault", {"username": "ada"}), "vault")
    browser = Client()
    assert Client().get(path).status_code == 403  # another principal's link
    assert_unframeable(Client().get(path))
    assert_unframeable(Client().get("/mcpforms/fill/not-a-token/"))  # 400
    assert_unframeable(Client().put(path))  # 405
    browser.force_login(ada)
    shown = browser.get(path)
    assert shown.status_code == 200 and 'type="password"' in shown.content.decode()
    assert_unframeable(shown)
    invalid = browser.post(path, {"username": "ada", "password": "short"})
    assert invalid.status_code == 400
    assert_unframeable(invalid)
    done = browser.post(path, {"username": "ada", "password": SECRET})
    assert done.status_code == 200 and "Submitted." in done.content.decode()
    assert_unframeable(done)
    again = browser.get(path)
    assert again.status_code == 410
    assert_unframeable(again)
    with mock.patch("django.core.signing.time.time", return_value=time.time() + 901):
        expired = browser.get(path)
    assert expired.status_code == 410
    assert_unframeable(expired)


def test_with_djangos_csp_middleware_the_page_keeps_the_projects_policy_and_adds_frame_ancestors():
    pytest.importorskip("django.middleware.csp")  # Django 6.0+
    from django.conf import settings

    middleware = [*settings.MIDDLEWARE, "django.middleware.csp.ContentSecurityPolicyMiddleware"]
    policy = {"default-src": ["'self'"], "frame-ancestors": ["'self'"]}
    with override_settings(MIDDLEWARE=middleware, SECURE_CSP=policy):
        response = Client().get("/mcpforms/fill/not-a-token/")
    assert response["Content-Security-Policy"] == "default-src 'self'; frame-ancestors 'none'"
    assert response["X-Frame-Options"] == "DENY"
