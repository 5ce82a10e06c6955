"""A wizard step with a password or a file, on the wire: the call sends the user to the URL-mode page for
that one step, the page keeps what was submitted on the server, the wizard goes on by form elicitation,
and the handler runs once at the end with the real password and file; no requestState ever carries them."""

from __future__ import annotations

import io
import json
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django import forms
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.http import HttpResponse
from django.test import Client, override_settings
from django.utils import timezone
from formtools.wizard.views import SessionWizardView

import mcpforms.sealing as sealing
from mcpforms.models import UrlElicitation, WizardPageStep
from mcpforms.protocol.era2025 import shim as era2025
from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server
from mcpforms.protocol.state import SALT
from mcpforms.protocol.tokens import unsign
from mcpforms.registry import register, register_wizard
from mcpforms.signals import tool_declined
from mcpforms.url_mode import load_page_token
from mcpforms.wizards import WizardTool
from tests.core_client import APPS, CoreClient, accept, asked, page_path, text, url_request
from tests.protocol.test_era2025 import Era2025Client

pytestmark = pytest.mark.django_db

SECRET = "correct horse battery staple"
URL_CAPABLE: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
SETTINGS = {"ALLOW_ANONYMOUS": True, "BASE_URL": "http://testserver"}
# Usernames the account step accepts: a test takes one away to make a kept answer invalid.
ACCOUNTS = {"ada", "grace"}


class DestinationForm(forms.Form):
    destination = forms.CharField(max_length=60)


class AccountForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput, min_length=8)

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        if username not in ACCOUNTS:
            raise forms.ValidationError("No such account.")
        return username


class DatesForm(forms.Form):
    start = forms.DateField()
    budget = forms.IntegerField(min_value=1)


class BookingWizard(WizardTool):
    form_list = [("destination", DestinationForm), ("account", AccountForm), ("dates", DatesForm)]
    handled: list[dict[str, Any]] = []

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        self.handled.append({name: value for form in form_list for name, value in form.cleaned_data.items()})
        start, username = (
            form_dict["dates"].cleaned_data["start"],
            form_dict["account"].cleaned_data["username"],
        )
        return f"Booked {start} for {username}."


class TitleForm(forms.Form):
    title = forms.CharField()


class ScanForm(forms.Form):
    scan = forms.FileField()


class ClaimWizard(WizardTool):
    form_list = [("title", TitleForm), ("scan", ScanForm)]
    received: list[tuple[str, bytes]] = []

    def handle(self, request, form_list, form_dict):  # type: ignore[override]
        scan = form_dict["scan"].cleaned_data["scan"]
        self.received.append((scan.name, scan.read()))
        return {"title": form_dict["title"].cleaned_data["title"], "bytes": scan.size}


@pytest.fixture(autouse=True)
def configured(settings: Any, tmp_path: Path) -> Iterator[Path]:
    """The folder of the storage the wizard's page keeps files in; public media is another."""
    BookingWizard.handled, ClaimWizard.received = [], []
    ACCOUNTS.clear()
    ACCOUNTS.update({"ada", "grace"})
    settings.MEDIA_ROOT = str(tmp_path / "media")
    kept = tmp_path / "wizard-files"
    settings.STORAGES = {
        **settings.STORAGES,
        "mcpforms_wizard_files": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(kept)},
        },
    }
    with override_settings(MCPFORMS=SETTINGS):
        yield kept


def files_in(folder: Path) -> list[Path]:
    return sorted(found for found in folder.rglob("*") if found.is_file())


def database_text() -> str:
    """Every value of every mcpforms table, as a database dump would show them."""
    from django.apps import apps

    values = []
    for model in apps.get_app_config("mcpforms").get_models():
        for row in model._default_manager.values():
            for value in row.values():
                raw = bytes(value) if isinstance(value, bytes | memoryview) else None
                values.append(raw.decode("latin-1") if raw is not None else json.dumps(value, default=str))
    return "\n".join(values)


@pytest.fixture
def server() -> Server:
    server = Server()
    register(BookingWizard, server=server)
    register(ClaimWizard, server=server)
    return server


def mcp(server: Server, user: Any = None, capabilities: dict[str, Any] | None = None) -> CoreClient:
    return CoreClient(server, capabilities=URL_CAPABLE if capabilities is None else capabilities, user=user)


def opened(client: CoreClient, first: dict[str, Any], name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The retry of a client whose user accepted to open the page (which says nothing of its outcome)."""
    return client.answer(first, name, arguments, **{name: {"action": "accept"}})


def to_the_account_page(client: CoreClient, arguments: dict[str, Any]) -> dict[str, Any]:
    first = client.call("booking", arguments)
    return client.answer(first, "booking", arguments, booking=accept(destination="Oslo"))


def page_of(result: dict[str, Any], name: str = "booking") -> str:
    """The row the page's link names (each link is signed anew, with its own timestamp)."""
    return load_page_token(page_path(result, name).rstrip("/").rsplit("/", 1)[1]).elicitation


def payload(state: str) -> str:
    """What a requestState says, as anyone holding it can read it."""
    return json.dumps(unsign(state, salt=SALT, max_age=3600))


def test_a_password_step_is_filled_on_the_page_and_the_wizard_goes_on(server):
    client = mcp(server)
    arguments = {"username": "ada"}
    first = client.call("booking", arguments)
    assert asked(first, "booking")["message"] == "Step 1 of at most 3: Destination"
    on_page = client.answer(first, "booking", arguments, booking=accept(destination="Oslo"))
    params = url_request(on_page, "booking")
    assert params["message"] == (
        "Step 2 of at most 3: Account\nPlease open this page to fill in this step: it asks for a password, "
        "which is never sent through the conversation."
    )

    browser = Client()
    path = page_path(on_page, "booking")
    html = browser.get(path).content.decode()
    assert 'name="username" value="ada"' in html and 'type="password"' in html  # prefilled, this step only
    assert 'name="destination"' not in html and 'name="start"' not in html

    # Accepting only opened the page: the retry sends the user to the same page, in the same round.
    again = opened(client, on_page, "booking", arguments)
    assert page_of(again) == page_of(on_page)
    assert UrlElicitation.objects.count() == 1
    assert (
        json.loads(payload(again["requestState"]))["rounds"]
        == json.loads(payload(on_page["requestState"]))["rounds"]
    )

    short = browser.post(path, {"username": "ada", "password": "short"})
    assert short.status_code == 400
    assert "Ensure this value has at least 8 characters" in short.content.decode()
    done = browser.post(path, {"username": "ada", "password": SECRET})
    assert done.status_code == 200
    assert "This step is done. Return to your assistant" in done.content.decode()
    assert BookingWizard.handled == []  # the page runs no handler: the wizard is not finished

    dates = opened(client, again, "booking", arguments)
    params = asked(dates, "booking")
    assert params["message"] == "Step 3 of at most 3: Dates"
    assert list(params["requestedSchema"]["properties"]) == ["start", "budget"]
    final = client.answer(dates, "booking", arguments, booking=accept(start="2027-01-02", budget=900))
    assert text(final) == "Booked 2027-01-02 for ada."
    assert BookingWizard.handled == [
        {
            "destination": "Oslo",
            "username": "ada",
            "password": SECRET,
            "start": date(2027, 1, 2),
            "budget": 900,
        }
    ]

    # The password never went through the conversation, and nothing of it is kept once the flow is done.
    for result in (first, on_page, again, dates, final):
        assert SECRET not in json.dumps(result)
        if "requestState" in result:
            assert SECRET not in payload(result["requestState"])
    assert not UrlElicitation.objects.exists() and not WizardPageStep.objects.exists()

    # Any round replayed gets the recorded outcome; the handler ran once.
    replayed = client.answer(dates, "booking", arguments, booking=accept(start="2027-01-02", budget=900))
    assert replayed == final
    assert opened(client, again, "booking", arguments) == final
    assert len(BookingWizard.handled) == 1


def test_the_link_works_once(server):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    path = page_path(on_page, "booking")
    browser = Client()
    assert browser.post(path, {"username": "ada", "password": SECRET}).status_code == 200
    reused = browser.post(path, {"username": "grace", "password": "other password"})
    assert reused.status_code == 410
    dates = opened(client, on_page, "booking", {})
    final = client.answer(dates, "booking", {}, booking=accept(start="2027-01-02", budget=5))
    assert text(final) == "Booked 2027-01-02 for ada."  # what the first submission kept


def test_the_page_keeps_the_password_encrypted_for_a_key_only_the_requeststate_holds(server):
    client = mcp(server)
    on_page = to_the_account_page(client, {"username": "ada"})
    Client().post(page_path(on_page, "booking"), {"username": "ada", "password": SECRET})
    dates = opened(client, on_page, "booking", {"username": "ada"})
    # A dump of the database holds neither the password nor the key to it: the flow's requestState does.
    dumped = database_text()
    assert SECRET not in dumped
    assert WizardPageStep.objects.get().sealed
    flow_key = json.loads(payload(dates["requestState"]))["key"]
    assert len(flow_key) >= 43 and flow_key not in dumped
    client.answer(dates, "booking", {"username": "ada"}, booking=accept(start="2027-01-02", budget=9))
    assert BookingWizard.handled[0]["password"] == SECRET  # the rounds open it with the requestState


def test_only_the_files_the_forms_own_fields_read_are_kept(server, tmp_path):
    first = mcp(server).call("claim", {"title": "Receipt"})
    posted = {
        "scan": SimpleUploadedFile("receipt.txt", b"42 EUR"),
        **{f"scan_{n}": SimpleUploadedFile(f"{n}.txt", b"spare") for n in range(3)},
        "scan-other": SimpleUploadedFile("other.txt", b"other"),
        "scanner": SimpleUploadedFile("scanner.txt", b"scanner"),
    }
    assert Client().post(page_path(first, "claim"), posted).status_code == 200
    assert len(files_in(tmp_path)) == 1  # in any storage


def test_files_go_to_a_storage_of_their_own_and_never_to_public_media(server, configured, settings):
    first = mcp(server).call("claim", {"title": "Receipt"})
    Client().post(page_path(first, "claim"), {"scan": SimpleUploadedFile("receipt.txt", b"42 EUR")})
    assert files_in(Path(settings.MEDIA_ROOT)) == []
    assert len(files_in(configured)) == 1


def test_without_a_storage_configured_files_go_to_a_private_folder(server, settings, tmp_path, monkeypatch):
    settings.STORAGES = {
        alias: used for alias, used in settings.STORAGES.items() if alias != "mcpforms_wizard_files"
    }
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    first = mcp(server).call("claim", {"title": "Receipt"})
    Client().post(page_path(first, "claim"), {"scan": SimpleUploadedFile("receipt.txt", b"42 EUR")})
    assert files_in(Path(settings.MEDIA_ROOT)) == []
    folder = tmp_path / "tmp" / "mcpforms-wizard-files"
    (kept,) = files_in(folder)
    assert kept.stat().st_mode & 0o077 == 0 and folder.stat().st_mode & 0o077 == 0  # the server's only


def later(monkeypatch: pytest.MonkeyPatch, seconds: int) -> None:
    """Move every clock the server reads ``seconds`` ahead."""
    moved = time.time() + seconds
    monkeypatch.setattr(time, "time", lambda: moved)
    monkeypatch.setattr(timezone, "now", lambda: datetime.fromtimestamp(moved, tz=UTC))


@override_settings(MCPFORMS={**SETTINGS, "SWEEP_EXPIRED": False})
def test_a_flow_nobody_finishes_loses_its_page_steps_once_its_state_cannot_be_replayed(
    server, configured, monkeypatch, django_capture_on_commit_callbacks
):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    Client().post(page_path(on_page, "booking"), {"username": "ada", "password": SECRET})
    dates = opened(client, on_page, "booking", {})
    claim = client.call("claim", {"title": "Receipt"})
    Client().post(page_path(claim, "claim"), {"scan": SimpleUploadedFile("receipt.txt", b"42 EUR")})
    assert WizardPageStep.objects.count() == 2 and len(files_in(configured)) == 1

    later(monkeypatch, 3000)  # within STATE_MAX_AGE of the last round: both flows can still go on
    with django_capture_on_commit_callbacks(execute=True):
        mcp(server).call("claim", {"title": "Another"})
    assert WizardPageStep.objects.filter(page__completed__isnull=False).count() == 2

    later(monkeypatch, 3601 + 60)  # no requestState of either flow verifies any more
    expired = client.send(
        "tools/call", {"name": "booking", "arguments": {}, "requestState": dates["requestState"]}
    )
    assert expired["error"]["code"] == -32602
    with django_capture_on_commit_callbacks(execute=True):
        mcp(server).call("claim", {"title": "A third"})  # a request of the site, with no cleanup run
    assert list(WizardPageStep.objects.values_list("page__tool", flat=True)) == ["claim"]  # the new page
    assert files_in(configured) == []


def test_a_flow_that_goes_on_keeps_its_page_step_past_the_pages_own_age(server, monkeypatch):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    Client().post(page_path(on_page, "booking"), {"username": "ada", "password": SECRET})
    later(monkeypatch, 3000)
    dates = opened(client, on_page, "booking", {})  # a round of the flow: its new requestState lasts
    later(monkeypatch, 1000)  # the page was asked more than STATE_MAX_AGE ago; the last round was not
    call_command("mcpforms_cleanup", stdout=io.StringIO())
    final = client.answer(dates, "booking", {}, booking=accept(start="2027-01-02", budget=5))
    assert text(final) == "Booked 2027-01-02 for ada."
    assert BookingWizard.handled[0]["password"] == SECRET


def test_a_rotated_signing_key_still_opens_what_was_sealed_while_it_is_a_fallback(server, settings):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    Client().post(page_path(on_page, "booking"), {"username": "ada", "password": SECRET})
    dates = opened(client, on_page, "booking", {})
    old = settings.SECRET_KEY
    with override_settings(
        SECRET_KEY="a new key of at least fifty characters, for the tests", SECRET_KEY_FALLBACKS=[old]
    ):
        final = client.answer(dates, "booking", {}, booking=accept(start="2027-01-02", budget=5))
    assert text(final) == "Booked 2027-01-02 for ada."
    assert BookingWizard.handled[0]["password"] == SECRET


def test_a_kept_step_that_does_not_open_is_asked_again_on_a_new_page(server, settings):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    Client().post(page_path(on_page, "booking"), {"username": "ada", "password": SECRET})
    dates = opened(client, on_page, "booking", {})
    kept = WizardPageStep.objects.get().sealed
    assert kept is not None
    sealed = bytearray(kept)
    sealed[-1] ^= 1  # changed in the database
    WizardPageStep.objects.update(sealed=bytes(sealed))
    again = client.answer(dates, "booking", {}, booking=accept(start="2027-01-02", budget=5))
    assert url_request(again, "booking")["message"].startswith("Step 2 of at most 3: Account\n")
    assert page_of(again) != page_of(on_page) and UrlElicitation.objects.count() == 1
    assert BookingWizard.handled == []


def test_declining_ends_the_flow_and_deletes_what_the_page_kept(server, django_capture_on_commit_callbacks):
    declined: list[str] = []

    def receiver(**kwargs: Any) -> None:
        declined.append(kwargs["action"])

    tool_declined.connect(receiver)
    try:
        client = mcp(server)
        on_page = to_the_account_page(client, {})
        Client().post(page_path(on_page, "booking"), {"username": "ada", "password": SECRET})
        dates = opened(client, on_page, "booking", {})
        assert WizardPageStep.objects.exists()
        with django_capture_on_commit_callbacks(execute=True):
            result = client.answer(dates, "booking", {}, booking={"action": "decline"})
    finally:
        tool_declined.disconnect(receiver)
    assert result["isError"] is True and "declined" in text(result)
    assert declined == ["decline"]
    assert not UrlElicitation.objects.exists() and not WizardPageStep.objects.exists()
    assert BookingWizard.handled == []


def test_declining_the_page_itself_ends_the_flow(server):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    result = client.answer(on_page, "booking", {}, booking={"action": "cancel"})
    assert result["isError"] is True and "cancelled" in text(result)
    assert not UrlElicitation.objects.exists()
    assert Client().get(page_path(on_page, "booking")).status_code == 404


def test_the_link_belongs_to_the_principal_who_asked(server):
    ada = User.objects.create_user("ada")
    eve = User.objects.create_user("eve")
    path = page_path(to_the_account_page(mcp(server, user=ada), {}), "booking")
    assert Client().get(path).status_code == 403  # nobody signed in
    browser = Client()
    browser.force_login(eve)
    refused = browser.post(path, {"username": "ada", "password": SECRET})
    assert refused.status_code == 403
    assert "belongs to another user" in refused.content.decode()
    assert WizardPageStep.objects.get().sealed is None  # nothing kept
    browser.force_login(ada)
    assert browser.get(path).status_code == 200


def test_a_client_without_url_mode_is_told_which_step_needs_it(server):
    client = mcp(server, capabilities={"elicitation": {"form": {}}})
    result = to_the_account_page(client, {})
    assert result["isError"] is True
    assert text(result) == (
        "Step 'account' (Account) of the Booking form cannot be filled here: it asks for a password, which "
        "is never sent through the conversation, and this client does not support URL-mode elicitation (it "
        "did not declare elicitation.url). Use a client that supports it; nothing was submitted."
    )
    assert not UrlElicitation.objects.exists()


@pytest.mark.parametrize(
    ("changed", "reason"),
    [
        ({"MCPFORMS": {"ALLOW_ANONYMOUS": True}}, "this server has no address for it"),
        ({"ROOT_URLCONF": "tests.conformance.urls"}, "this server does not serve it"),
    ],
)
def test_a_server_that_cannot_serve_the_page_says_so(server, changed, reason):
    client = mcp(server)
    first = client.call("booking")
    with override_settings(**changed):
        result = client.answer(first, "booking", booking=accept(destination="Oslo"))
    assert result["isError"] is True
    assert text(result) == f"Step 'account' (Account) of the Booking form needs a web page, but {reason}."
    assert not UrlElicitation.objects.exists()


def test_a_kept_step_that_no_longer_validates_is_asked_on_a_new_page(server):
    client = mcp(server)
    on_page = to_the_account_page(client, {})
    Client().post(page_path(on_page, "booking"), {"username": "grace", "password": SECRET})
    dates = opened(client, on_page, "booking", {})
    ACCOUNTS.discard("grace")  # between the rounds: the kept answer is no longer valid
    again = client.answer(dates, "booking", {}, booking=accept(start="2027-01-02", budget=5))
    params = url_request(again, "booking")
    assert params["message"].startswith("Step 2 of at most 3: Account\n")
    assert params["message"].endswith("Please correct:\n- Username (username): No such account.")
    assert page_of(again) != page_of(on_page)
    assert UrlElicitation.objects.count() == 1  # the page with grace's password is gone
    Client().post(page_path(again, "booking"), {"username": "ada", "password": SECRET})
    dates = opened(client, again, "booking", {})
    assert asked(dates, "booking")["message"] == "Step 3 of at most 3: Dates"
    final = client.answer(dates, "booking", {}, booking=accept(start="2027-01-02", budget=5))
    assert text(final) == "Booked 2027-01-02 for ada."
    assert [handled["username"] for handled in BookingWizard.handled] == ["ada"]


def test_a_file_step_hands_the_file_to_the_handler_and_deletes_it_afterwards(
    server, configured, django_capture_on_commit_callbacks
):
    client = mcp(server)
    first = client.call("claim", {"title": "Receipt"})
    params = url_request(first, "claim")
    assert params["message"].startswith("Step 2 of at most 2: Scan\n")
    assert "it asks for a file" in params["message"]
    path = page_path(first, "claim")
    page = Client().get(path).content.decode()
    assert 'enctype="multipart/form-data"' in page and 'type="file"' in page
    upload = SimpleUploadedFile("receipt.txt", b"42 EUR, paid", content_type="text/plain")
    assert Client().post(path, {"scan": upload}).status_code == 200
    stored = files_in(configured)
    assert len(stored) == 1
    assert b"42 EUR" not in stored[0].read_bytes()  # encrypted for the flow
    assert "receipt" not in str(stored[0])  # under a random name

    with django_capture_on_commit_callbacks(execute=True) as committed:
        final = opened(client, first, "claim", {"title": "Receipt"})
        assert stored[0].exists()  # until the handler's transaction commits
    assert committed
    assert final["structuredContent"] == {"title": "Receipt", "bytes": 12}
    assert ClaimWizard.received == [("receipt.txt", b"42 EUR, paid")]
    assert not stored[0].exists()
    assert not WizardPageStep.objects.exists()


def test_an_existing_formtools_view_gets_the_file_in_done():
    class ClaimView(SessionWizardView):  # type: ignore[misc]  # formtools is untyped
        form_list = [("title", TitleForm), ("scan", ScanForm)]
        file_storage = default_storage  # formtools insists on one (mcpforms keeps the file in its own)

        def done(self, form_list: Any, **kwargs: Any) -> HttpResponse:
            scan = kwargs["form_dict"]["scan"].cleaned_data["scan"]
            return HttpResponse(f"{scan.name}: {scan.read().decode()}")

    server = Server()
    register_wizard(ClaimView, server=server)
    client = mcp(server)
    first = client.call("claim", {"title": "Receipt"})
    Client().post(page_path(first, "claim"), {"scan": SimpleUploadedFile("receipt.txt", b"42 EUR")})
    assert text(opened(client, first, "claim", {"title": "Receipt"})) == "receipt.txt: 42 EUR"


def test_a_file_kept_for_a_flow_nobody_finishes_is_deleted_with_its_expired_page(
    server, configured, django_capture_on_commit_callbacks
):
    first = mcp(server).call("claim", {"title": "Receipt"})
    upload = SimpleUploadedFile("receipt.txt", b"42 EUR, paid")
    Client().post(page_path(first, "claim"), {"scan": upload})
    (stored,) = files_in(configured)
    UrlElicitation.objects.update(created=timezone.now() - timedelta(days=1))
    WizardPageStep.objects.update(expires=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("mcpforms_cleanup", stdout=io.StringIO())
    assert not WizardPageStep.objects.exists()
    assert not stored.exists()


class ProfileForm(forms.Form):
    name = forms.CharField()
    photo = forms.FileField(required=False)


class ProfileWizard(WizardTool):
    form_list = [("profile", ProfileForm)]
    always_ask = {"profile"}


def test_a_step_the_user_answers_on_the_page_waits_for_the_page_even_when_the_arguments_fill_it(server):
    register(ProfileWizard, server=server)
    client = mcp(server)
    first = client.call("profile", {"name": "Ada"})
    assert "it asks for a file" in url_request(first, "profile")["message"]
    # Accepting opened the page and submitted nothing: the step is not answered yet.
    again = opened(client, first, "profile", {"name": "Ada"})
    assert page_of(again, "profile") == page_of(first, "profile")
    assert Client().post(page_path(again, "profile"), {"name": "Ada Lovelace"}).status_code == 200
    done = opened(client, again, "profile", {"name": "Ada"})
    assert done["structuredContent"] == {"name": "Ada Lovelace", "photo": None}


class ConfirmForm(forms.Form):
    confirmed = forms.BooleanField(label="I confirm this booking")


class ConfirmedBookingWizard(WizardTool):
    form_list = [("destination", DestinationForm), ("confirmation", ConfirmForm)]
    always_ask = {"confirmation"}


@pytest.mark.parametrize("capabilities", [{"elicitation": {"url": {}}}, APPS | {"elicitation": {"url": {}}}])
def test_a_client_that_cannot_show_a_form_has_the_user_answer_their_step_on_the_page(server, capabilities):
    register(ConfirmedBookingWizard, server=server)
    client = mcp(server, capabilities=capabilities)
    arguments = {"destination": "Oslo", "confirmed": True}
    first = client.call("confirmed_booking", arguments)  # the arguments fill it: they only prefill it
    assert url_request(first, "confirmed_booking")["message"] == (
        "Step 2 of at most 2: Confirmation\nPlease open this page to fill in this step: the user answers "
        "it themselves, and this client cannot show them a form."
    )
    path = page_path(first, "confirmed_booking")
    assert 'id="id_confirmed" checked' in Client().get(path).content.decode()  # prefilled
    again = opened(client, first, "confirmed_booking", arguments)  # opened, nothing submitted yet
    assert page_of(again, "confirmed_booking") == page_of(first, "confirmed_booking")
    assert Client().post(path, {"confirmed": "on"}).status_code == 200
    done = opened(client, again, "confirmed_booking", arguments)
    assert done["structuredContent"] == {"destination": "Oslo", "confirmed": True}
    assert not WizardPageStep.objects.exists()


def test_without_cryptography_a_wizard_with_a_page_step_fails_its_checks(monkeypatch):
    monkeypatch.setattr(sealing, "available", lambda: False)
    (error,) = [message for message in BookingWizard().check() if message.id == "mcpforms.E417"]
    assert error.msg.startswith("The wizard's step 'account' has a password or a file, which the URL-mode")
    assert "cryptography package, 47 or later, which is not installed" in error.msg
    assert error.hint == (
        'python -m pip install "path/to/mcpforms[wizard-pages]" (from mcpforms\' checkout: not on PyPI yet)'
    )
    assert [message.id for message in ConfirmedBookingWizard().check()] == []  # nothing to keep there


def test_without_cryptography_a_client_that_cannot_show_a_form_is_told_the_step_is_the_users(
    server, monkeypatch
):
    monkeypatch.setattr(sealing, "available", lambda: False)
    register(ConfirmedBookingWizard, server=server)
    client = mcp(server, capabilities={"elicitation": {"url": {}}})
    result = client.call("confirmed_booking", {"destination": "Oslo", "confirmed": True})
    assert result["isError"] is True
    assert text(result).startswith(
        "Step 'confirmation' (Confirmation) of the Confirmed booking form is answered"
    )
    assert not UrlElicitation.objects.exists()


def test_a_2025_session_is_sent_to_the_page_then_asked_the_next_step():
    BookingWizard.handled = []
    server = Server(name="legacy", sessions=MemorySessions())
    register(BookingWizard, server=server)
    client = Era2025Client(server, capabilities=URL_CAPABLE)
    (asking,) = client.request("tools/call", {"name": "booking", "arguments": {}}).events or ()

    def answer(event: Any, result: dict[str, Any]) -> Any:
        assert event.data is not None
        client.send({"jsonrpc": "2.0", "id": event.data["id"], "result": result})
        return era2025.resume(server, client.headers, event.id, None, server.sessions).events or ()

    (page,) = answer(asking, {"action": "accept", "content": {"destination": "Oslo"}})
    assert page.data["params"]["mode"] == "url"
    assert page.data["params"]["message"].startswith("Step 2 of at most 3: Account\n")
    waiting = answer(page, {"action": "accept"})  # the user opened the page: the call waits for it
    assert [event.data for event in waiting] == [None]
    submitted = Client().post(
        urlsplit(page.data["params"]["url"]).path, {"username": "ada", "password": SECRET}
    )
    assert submitted.status_code == 200
    completed, dates = era2025.resume(server, client.headers, page.id, None, server.sessions).events or ()
    assert completed.data is not None and dates.data is not None
    assert completed.data["method"] == "notifications/elicitation/complete"
    assert dates.data["params"]["message"] == "Step 3 of at most 3: Dates"
    (final,) = answer(dates, {"action": "accept", "content": {"start": "2027-01-02", "budget": 9}})
    assert final.data["result"]["content"][0]["text"] == "Booked 2027-01-02 for ada."
    assert BookingWizard.handled[0]["password"] == SECRET
    assert not WizardPageStep.objects.exists()
