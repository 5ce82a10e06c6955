"""``manage.py mcpforms_stdio``: the protocol core over stdio, driven by the official Python client in both
eras through a real process, and the edge's own rules (what reaches stdout, cancellation, EOF) line by line.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import override_settings
from mcp import Client, StdioServerParameters

from mcpforms import stdio
from mcpforms.management.commands.mcpforms_stdio import Command
from mcpforms.protocol import Server
from tests import wire
from tests.docs_examples import example

ROOT = Path(__file__).resolve().parent.parent

# The in-process tests handle each message as Django handles a request, checking its database
# connections before and after.
pytestmark = pytest.mark.django_db

# A tool only a user with a permission sees, answering with who called; it prints, as careless code does,
# reports progress and logs, so the tests see where each of those goes.
PROBE_TOOLS = '''
from django import forms

import mcpforms


class NoteForm(forms.Form):
    """Leave a note signed with your name."""

    text = forms.CharField()


@mcpforms.tool(NoteForm, name="signed_note", permission="auth.view_user")
def signed_note(request, form):
    print("a stray print from a handler")
    request.report_progress(1, 1, "signing")
    request.log("info", "signed a note")
    return {"by": request.user.get_username(), "text": form.cleaned_data["text"]}
'''

USERS = """
from django.contrib.auth.models import Permission, User

alice = User.objects.create_user("alice")
alice.user_permissions.add(Permission.objects.get(codename="view_user"))
User.objects.create_user("bob", is_active=False)
"""

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
META = wire.meta(wire.ELICITATION)


@dataclass(frozen=True)
class Project:
    directory: Path
    env: dict[str, str]

    def settings(self, module: str) -> dict[str, str]:
        return {**self.env, "DJANGO_SETTINGS_MODULE": module}

    def server(self, *args: str, module: str = "stdio_settings") -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=[str(ROOT / "manage.py"), "mcpforms_stdio", *args],
            env=self.settings(module),
            cwd=self.directory,
        )

    def run(
        self, *args: str, stdin: bytes = b"", module: str = "stdio_settings"
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the command to the end of ``stdin``."""
        return subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "mcpforms_stdio", *args],
            input=stdin,
            capture_output=True,
            env={**os.environ, **self.settings(module)},
            cwd=self.directory,
            timeout=60,
        )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    directory = tmp_path_factory.mktemp("stdio")
    database = directory / "db.sqlite3"
    (directory / "stdio_settings.py").write_text(
        "from tests.settings import *\n"
        f"DATABASES = {{'default': {{'ENGINE': 'django.db.backends.sqlite3', 'NAME': {str(database)!r}}}}}\n"
        "INSTALLED_APPS = [*INSTALLED_APPS, 'stdio_probe']\n"
    )
    (directory / "closed_settings.py").write_text(
        "from stdio_settings import *\nMCPFORMS = {'ALLOW_ANONYMOUS': False}\n"
    )
    (directory / "stdio_probe").mkdir()
    (directory / "stdio_probe" / "__init__.py").write_text("")
    (directory / "stdio_probe" / "mcp_tools.py").write_text(PROBE_TOOLS)
    env = {"PYTHONPATH": f"{directory}{os.pathsep}{ROOT}", "DJANGO_SETTINGS_MODULE": "stdio_settings"}
    full = {**os.environ, **env}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=full, check=True)
    subprocess.run([sys.executable, "manage.py", "shell", "-c", USERS], cwd=ROOT, env=full, check=True)
    return Project(directory, env)


# The official client, in each era ---------------------------------------------------------------------


def fill_signup(
    project: Project, mode: str, *args: str
) -> tuple[str, list[str], list[str], types.CallToolResult]:
    """List the tools and call testapp_signup without its email: the user is asked, answers a wrong email,
    is asked again with Django's message, and answers a right one."""
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        email = "not-an-email" if len(asked) == 1 else "ada@example.com"
        return types.ElicitResult(action="accept", content={"email": email})

    async def scenario() -> tuple[str, list[str], types.CallToolResult]:
        server = project.server(*args)
        async with Client(server, mode=mode, elicitation_callback=answer, cache=None) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("testapp_signup", {"plan": "pro"})
            return client.protocol_version, names, result

    version, names, result = asyncio.run(scenario())
    return version, names, asked, result


@pytest.mark.parametrize(
    ("mode", "version"), [("2026-07-28", "2026-07-28"), ("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
def test_the_python_client_fills_a_form_over_stdio_in_each_era(project, mode, version):
    negotiated, names, asked, result = fill_signup(project, mode)
    assert negotiated == version
    assert "testapp_signup" in names
    assert "signed_note" not in names  # anonymous callers lack its permission
    assert asked == [
        "Please fill in: Testapp signup",
        "Please fill in: Testapp signup\nPlease correct:\n- Email (email): Enter a valid email address.",
    ]
    assert not result.is_error
    assert result.structured_content == {
        "email": "ada@example.com",
        "plan": "pro",
        "age": None,
        "newsletter": False,
    }


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_desktop_config_snippet_starts_a_server_acting_as_its_user(project, mode):
    # docs/howto/clients/desktop-hosts.md's claude_desktop_config.json, word for word.
    entry = json.loads(example("desktop-stdio-config"))["mcpServers"]["mysite-forms"]
    manage, *args = entry["args"]
    assert Path(manage).name == "manage.py" and set(entry["env"]) == {"DJANGO_SETTINGS_MODULE"}
    options = Command().create_parser("manage.py", "mcpforms_stdio").parse_args(args[1:])
    assert (args[0], options.user) == ("mcpforms_stdio", "alice")
    logged: list[Any] = []

    async def log(params: Any) -> None:
        logged.append(params.data)

    async def scenario() -> tuple[list[str], types.CallToolResult]:
        server = project.server(*args[1:])
        async with Client(server, mode=mode, logging_callback=log, log_level="info", cache=None) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, await client.call_tool("signed_note", {"text": "hello"})

    names, result = asyncio.run(scenario())
    assert "signed_note" in names
    assert result.structured_content == {"by": "alice", "text": "hello"}
    assert logged == ["signed a note"]


@pytest.mark.parametrize(
    ("args", "module", "message"),
    [
        (["--user", "nobody"], "stdio_settings", "No user named 'nobody'."),
        (["--user", "bob"], "stdio_settings", "The user 'bob' is inactive"),
        ([], "closed_settings", "Anonymous callers are not allowed (MCPFORMS['ALLOW_ANONYMOUS'] is False)"),
    ],
)
def test_a_caller_it_may_not_act_as_ends_the_process_with_a_clear_error(project, args, module, message):
    run = project.run(*args, module=module)
    assert run.returncode == 1
    assert message in run.stderr.decode()
    assert run.stdout == b""


# The wire, line by line --------------------------------------------------------------------------------


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_stdout_carries_one_json_message_a_line_and_eof_ends_the_process(project):
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "signed_note",
            "arguments": {"text": "two\nlines ✓"},
            "_meta": {**META, "progressToken": "p1"},
        },
    }
    stdin = b"this is not json\n\n" + line(call) + line({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    run = project.run("--user", "alice", stdin=stdin)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.count(b"\n") == 4  # the newline in the text travels escaped
    parse_error, progress, result, pong = (json.loads(text) for text in run.stdout.decode().splitlines())
    assert parse_error == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the body is not JSON"},
    }
    assert progress["method"] == "notifications/progress"
    assert progress["params"] == {"progressToken": "p1", "progress": 1, "total": 1, "message": "signing"}
    assert result["id"] == 1
    assert result["result"]["structuredContent"] == {"by": "alice", "text": "two\nlines ✓"}
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert "a stray print from a handler" in run.stderr.decode()


class Conversation:
    """A live process, one line at a time."""

    def __init__(self, project: Project, *args: str, stderr: Path) -> None:
        self.stderr = stderr.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "mcpforms_stdio", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={**os.environ, **project.env},
            cwd=project.directory,
        )
        self.lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            self.lines.put(text)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line(message))
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        text = self.lines.get(timeout=30)
        assert text, "stdout ended"
        message: dict[str, Any] = json.loads(text)
        return message

    def close(self) -> tuple[int, bytes]:
        """Close stdin; the exit status and whatever stdout still held."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        status = self.process.wait(timeout=30)
        rest = b"".join(iter(lambda: self.lines.get(timeout=30), b""))
        self.stderr.close()
        return status, rest


def test_a_cancelled_2025_call_sends_nothing_more_and_its_answer_runs_nothing(project, tmp_path):
    chat = Conversation(project, stderr=tmp_path / "stderr.txt")
    initialize = {**INITIALIZE, "capabilities": {"elicitation": {}}}
    chat.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
    assert chat.receive()["result"]["protocolVersion"] == "2025-11-25"
    chat.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    chat.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "testapp_signup", "arguments": {}},
        }
    )
    asked = chat.receive()
    assert asked["method"] == "elicitation/create"
    chat.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    answer = {"action": "accept", "content": {"email": "ada@example.com", "plan": "pro"}}
    chat.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
    chat.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert chat.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}  # nothing for request 2 came first
    status, rest = chat.close()
    assert (status, rest) == (0, b"")
    assert (
        f"Ignored an answer to no open request of this server: id {asked['id']!r}"
        in (tmp_path / "stderr.txt").read_text()
    )


# The edge in this process --------------------------------------------------------------------------------


class Script:
    """stdin made of steps, each a function returning the next line (b"" ends it). The edge asks for the
    next line only once it has queued the one before (and recorded it, if it was a cancellation), so a step
    can wait for the server, and knows the lines before it were read."""

    def __init__(self, *steps: Callable[[], bytes]) -> None:
        self.steps = list(steps)

    def readline(self, size: int = -1) -> bytes:
        return self.steps.pop(0)() if self.steps else b""


class Written(io.BytesIO):
    """stdout, read back as messages while the edge writes."""

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(text) for text in self.getvalue().decode().splitlines()]

    def wait_for(self, found: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
        for _ in range(1000):
            if found(messages := self.messages()):
                return messages
            time.sleep(0.01)
        raise AssertionError(f"never written: {self.messages()}")


def serve(server: Server, *lines: bytes | Callable[[], bytes]) -> list[dict[str, Any]]:
    stdout = Written()
    stdin = Script(*(step if callable(step) else (lambda text=step: text) for step in lines))
    stdio.serve(server, caller=AnonymousUser, stdin=stdin, stdout=stdout)
    return stdout.messages()


def test_a_2025_client_is_not_asked_for_the_mcp_param_headers_of_2026():
    server = Server()

    @server.tool(
        description="Echo a region.",
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    )
    def region(ctx: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": arguments["region"]}]}

    call = {"name": "region", "arguments": {"region": "eu-west"}}
    _, answer = serve(
        server,
        line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE}),
        line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
    )
    assert answer["result"]["content"] == [{"type": "text", "text": "eu-west"}]


@override_settings(MCPFORMS={"MAX_BODY_BYTES": 100})
def test_a_line_over_the_size_limit_is_refused_and_the_next_one_served():
    too_long = b'{"padding": "' + b"x" * 300 + b'"}\n'
    stdout = Written()
    stdin = io.BytesIO(too_long + line({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
    stdio.serve(Server(), caller=AnonymousUser, stdin=stdin, stdout=stdout)
    refused, pong = stdout.messages()
    assert refused["id"] is None and refused["error"]["code"] == -32600
    assert "longer than 100 bytes (MCPFORMS['MAX_BODY_BYTES'])" in refused["error"]["message"]
    assert pong == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_a_cancelled_request_sends_nothing_after_the_cancellation():
    started, cancelled = threading.Event(), threading.Event()
    server = Server()

    @server.tool(description="Take a while.")
    def slow(ctx: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        ctx.report_progress(1, 2)
        started.set()
        assert cancelled.wait(timeout=10)
        ctx.report_progress(2, 2)
        return {"content": [{"type": "text", "text": "done"}]}

    def cancel() -> bytes:
        assert started.wait(timeout=10)  # while the tool runs
        return line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})

    def ping() -> bytes:
        cancelled.set()  # the cancellation was read
        return line({"jsonrpc": "2.0", "id": 2, "method": "ping"})

    call = {"name": "slow", "_meta": {**META, "progressToken": 5}}
    progress, pong = serve(
        server, line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}), cancel, ping
    )
    assert progress["params"] == {"progressToken": 5, "progress": 1, "total": 2}
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}


@override_settings(MCPFORMS={"RETRY_MS": 20})
def test_a_2025_call_waiting_on_a_url_mode_page_goes_on_once_a_poll_finds_the_page_done():
    page_done = threading.Event()
    runs: list[bool] = []
    server = Server()

    @server.tool(description="Send the user to a page.")
    def visit(ctx: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        runs.append(page_done.is_set())
        if page_done.is_set():
            return {"content": [{"type": "text", "text": "visited"}]}
        page = {"mode": "url", "message": "Open the page", "url": "https://example.com/page"}
        return {
            "resultType": "input_required",
            "inputRequests": {"page": {"method": "elicitation/create", "params": page}},
        }

    stdout = Written()

    def accept() -> bytes:
        *_, asked = stdout.wait_for(
            lambda messages: bool(messages) and messages[-1].get("method") == "elicitation/create"
        )
        assert asked["params"]["elicitationId"] == asked["id"]
        return line({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}})

    def finish_the_page() -> bytes:
        while len(runs) < 2:  # the answer went in, and the page was not done yet
            time.sleep(0.01)
        page_done.set()
        stdout.wait_for(lambda messages: "result" in messages[-1])  # what only a poll can find
        return b""

    initialize = {**INITIALIZE, "capabilities": {"elicitation": {"url": {}}}}
    call = {"name": "visit", "arguments": {}}
    stdin = Script(
        lambda: line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}),
        lambda: line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
        accept,
        finish_the_page,
    )
    stdio.serve(server, caller=AnonymousUser, stdin=stdin, stdout=stdout)
    _, asked, complete, result = stdout.messages()
    assert complete["method"] == "notifications/elicitation/complete"
    assert complete["params"] == {"elicitationId": asked["id"]}
    assert result == {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "visited"}]}}
    assert runs[:2] == [False, False] and runs[-1] is True


def test_a_message_with_a_method_is_a_request_even_with_a_result_and_an_answer_is_answered_by_nothing():
    # One rule tells a response from a request, as over HTTP (`jsonrpc.is_response`): a method member
    # that is no string makes an invalid request, answered; a stray answer to nothing is only logged.
    messages = serve(
        Server(),
        line({"jsonrpc": "2.0", "id": 5, "method": None, "result": {}}),
        line({"jsonrpc": "2.0", "id": "never-asked", "result": {"action": "accept"}}),
        line({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    )
    assert messages == [
        {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {"code": -32600, "message": 'Invalid request: "method" must be a string'},
        },
        {"jsonrpc": "2.0", "id": 6, "result": {}},
    ]
