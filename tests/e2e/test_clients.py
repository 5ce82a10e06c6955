"""The clients of docs/howto/clients/, each run as its users run it against a real demo server: the page's
own code or commands, fetched by name, with only the demo's address (and the token a user pastes) put in.
Each lists the tools or files a ticket as the staff user, and the test reads the ticket back from the
database; where the client can ask its user, the page's handler supplies the missing details.

Beside the pages' examples, the claims the pages make of each client (the era it negotiates, what it does
when nobody can be asked) are checked here with the client's own options. The TypeScript SDK's 2025-era
defaults are in ``test_era2025_clients.py``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from agents.mcp import MCPServerStreamableHttp
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_ai.mcp import MCPToolset

from tests.conformance.run import NODE_BIN, ROOT, free_port, stop_process
from tests.docs_examples import example
from tests.e2e.demo_server import DEMO_TOOLS, DemoServer, demo_server
from tests.e2e.node import node_report
from tests.e2e.terminal import matches, piped

ARTIFACTS = Path(os.environ.get("MCPFORMS_ARTIFACTS", ROOT / "artifacts")) / "clients"
CHROMIUM = Path("/usr/bin/chromium")
# The demo's address under `make run`, as every page writes it; the tests put their server's in its place.
DOCS_URL = "http://127.0.0.1:8000/mcp"
TOKEN_PLACEHOLDER = "mcpf_your_token_here"
# What the pages' examples file: create_ticket with only the subject, the rest answered by the user.
LIFT = ("Lift stuck", "The lift is stuck on floor 3.", "high")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with demo_server(tmp_path_factory.mktemp("clients")) as server:
        yield server


def every_argument(subject: str) -> dict[str, str]:
    """create_ticket's arguments, all of them: the call completes without asking anyone."""
    return {"subject": subject, "body": "Every argument given.", "priority": "low"}


def ticket(demo: DemoServer, pk: object) -> tuple[object, ...]:
    """The ticket the server stored: its subject, body and priority."""
    (row,) = demo.rows("select subject, body, priority from demo_ticket where id = ?", pk)
    return row


def node_env(**extra: str) -> dict[str, str]:
    """This environment with the pinned node 22 first on PATH, which the npm clients' scripts run on."""
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


def npm_command(name: str) -> str:
    command = ROOT / "node_modules" / ".bin" / name
    assert command.exists(), "node_modules is missing: run `npm ci` (make does)"
    return str(command)


def run(command: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, timeout=60)


def run_json(command: list[str], env: dict[str, str]) -> Any:
    """What ``command`` prints, as JSON; it must succeed."""
    done = run(command, env)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def pointed_at(demo: DemoServer, code: str) -> str:
    """A page's example pointed at the test's demo server instead of `make run`'s."""
    assert DOCS_URL in code, f"the example no longer calls the demo at {DOCS_URL}"
    return code.replace(DOCS_URL, demo.url)


def user_env(demo: DemoServer, home: Path, **extra: str) -> dict[str, str]:
    """The shell of a user who exported the staff user's token, with the npm clients' commands on PATH (as
    `npm i -g` puts them) and the pinned node 22 first."""
    path = os.pathsep.join([str(NODE_BIN), str(ROOT / "node_modules" / ".bin"), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "HOME": str(home), "MCPFORMS_TOKEN": demo.token, **extra}


def shell(code: str, env: dict[str, str], stdin: str = "") -> str:
    """Run a page's shell example with bash, as pasted into a terminal; it must succeed."""
    done = subprocess.run(
        ["bash", "-e", "-c", code],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def script(code: str, env: dict[str, str], stdin: str = "", *, node: bool = False) -> str:
    """Run a page's Python or JavaScript example as its own file would run; it must succeed. A JavaScript
    one runs from this checkout, so its imports resolve to the pinned packages of node_modules."""
    if node:
        command, cwd = [str(NODE_BIN / "node"), "--input-type=module", "-"], ROOT
        stdin = code
    else:
        directory = Path(tempfile.mkdtemp(prefix="docs-example-"))
        (directory / "client.py").write_text(code)
        command, cwd = [sys.executable, str(directory / "client.py")], directory
    done = subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def json_values(text: str) -> list[Any]:
    """The JSON documents printed one after the other in ``text``."""
    decoder, values, position = json.JSONDecoder(), [], 0
    while (position := _skip_space(text, position)) < len(text):
        value, position = decoder.raw_decode(text, position)
        values.append(value)
    return values


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def newest_ticket(demo: DemoServer) -> tuple[object, ...]:
    (row,) = demo.rows("select subject, body, priority from demo_ticket order by id desc limit 1")
    return row


def ticket_count(demo: DemoServer) -> int:
    (count,) = demo.rows("select count(*) from demo_ticket")[0]
    assert isinstance(count, int)
    return count


# ---- The official Python SDK and fastmcp ---------------------------------------------------------------


def test_the_python_sdk_page_files_a_ticket_and_prints_what_the_page_shows(demo, tmp_path):
    code = pointed_at(demo, example("python-sdk-client"))
    output = script(code, user_env(demo, tmp_path))
    # The page shows one run: the ticket's pk differs from run to run.
    expected = re.escape(example("python-sdk-client-output")).replace(r"Ticket:\ 3", r"Ticket:\ \d+")
    assert re.fullmatch(expected, output), output
    assert newest_ticket(demo) == LIFT


def test_the_python_sdk_in_legacy_mode_asks_through_the_same_callback(demo, tmp_path):
    # The page's one change for the 2025-11-25 era: mode="legacy" beside the callback.
    code = pointed_at(demo, example("python-sdk-client"))
    assert code.count("Client(endpoint, elicitation_callback=answer)") == 1
    legacy = code.replace("Client(endpoint, ", 'Client(endpoint, mode="legacy", ')
    output = script(legacy, user_env(demo, tmp_path))
    assert output.startswith("Protocol: 2025-11-25\n"), output
    assert "Asked: Open a support ticket ['body', 'priority', 'due']\n" in output
    assert newest_ticket(demo) == LIFT


def test_the_fastmcp_page_lists_the_tools_and_asks_on_the_terminal(demo, tmp_path):
    env = user_env(demo, tmp_path)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # where pip put fastmcp
    # The user types the body, the priority, and nothing for the optional due date.
    output = shell(
        pointed_at(demo, example("fastmcp-token")), env, stdin="The lift is stuck on floor 3.\nhigh\n\n"
    )
    assert "Tools (7)" in output and all(f"  {name}(" in output for name in DEMO_TOOLS)
    assert "\nServer asks: Open a support ticket\n" in output
    assert newest_ticket(demo) == LIFT


# ---- MCP Inspector: its CLI, its connection CLI (mcpdo) and its web UI -------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_cli_lists_the_tools_and_files_a_ticket(demo, tmp_path, era):
    # Without --protocol-era the CLI opens with the 2025-11-25 handshake ("legacy").
    era_option = [] if era == "legacy" else ["--protocol-era", era]
    inspector = [npm_command("mcp-inspector"), "--cli", demo.url, *era_option]
    inspector += ["--header", f"Authorization: Bearer {demo.token}"]
    env = node_env(HOME=str(tmp_path), MCP_INSPECTOR_SECRET_STORE="memory")

    listed = run_json([*inspector, "--method", "tools/list"], env)
    assert {tool["name"] for tool in listed["tools"]} >= DEMO_TOOLS

    call = [*inspector, "--method", "tools/call", "--tool-name", "create_ticket", "--tool-arg"]
    result = run_json(
        [*call, *(f"{name}={value}" for name, value in every_argument("Inspector CLI").items())], env
    )
    assert not result.get("isError")
    # Only a 2026-07-28 result carries serverInfo in its _meta: this is the era the CLI negotiated.
    assert (types.SERVER_INFO_META_KEY in result.get("_meta", {})) == (era == "modern")
    assert ticket(demo, result["structuredContent"]["pk"]) == tuple(every_argument("Inspector CLI").values())

    # The CLI declares no elicitation: a call missing details exits 5 with the result naming them.
    half = run([*call, "subject=Inspector CLI, half done"], env)
    assert half.returncode == 5, half.stderr[-4000:]
    missing = json.loads(half.stdout)
    assert missing["isError"] and "- Body (body): This field is required." in missing["content"][0]["text"]


def test_the_inspector_pages_cli_commands_list_and_file_a_ticket(demo, tmp_path):
    env = user_env(demo, tmp_path, MCP_INSPECTOR_SECRET_STORE="memory")
    listed, result = json_values(shell(pointed_at(demo, example("inspector-cli")), env))
    assert {tool["name"] for tool in listed["tools"]} >= DEMO_TOOLS
    assert types.SERVER_INFO_META_KEY in result["_meta"]  # --protocol-era modern: a 2026-07-28 result
    assert ticket(demo, result["structuredContent"]["pk"]) == ("Lift stuck", "On floor 3.", "high")


def test_the_inspector_pages_mcpdo_session_asks_and_files_a_ticket(demo):
    home = Path(tempfile.mkdtemp(prefix="mcpdo-"))  # mcpdo's daemon socket path must stay short
    env = user_env(demo, home, MCP_INSPECTOR_DAEMON_DIR=f"{home}/d", MCP_INSPECTOR_SECRET_STORE="file")
    connect, call, respond, stop = pointed_at(demo, example("inspector-mcpdo")).splitlines()
    try:
        shell(connect, env)
        asked = shell(call, env)
        assert "is waiting on the user:\n  Open a support ticket\n" in asked
        assert "Fields (3):\n  body (string, required)" in asked
        # What the user does: put the id the call printed in place of <elicitationId>.
        (elicitation_id,) = set(re.findall(r"elicitation/respond (elicitation-[0-9a-f-]+) ", asked))
        assert "<elicitationId>" in respond
        answered = shell(respond.replace("<elicitationId>", elicitation_id), env)
        assert '"subject": "Lift stuck"' in answered
        assert newest_ticket(demo) == ("Lift stuck", "On floor 3.", "high")
    finally:
        subprocess.run(["bash", "-c", stop], cwd=ROOT, env=env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspectors_mcpdo_asks_the_user_and_files_a_ticket(demo, era):
    # mcpdo keeps the connection in a daemon whose socket path must stay short: a private folder in /tmp.
    home = Path(tempfile.mkdtemp(prefix="mcpdo-"))
    env = node_env(HOME=str(home), MCP_INSPECTOR_DAEMON_DIR=f"{home}/d", MCP_INSPECTOR_SECRET_STORE="file")
    mcpdo = [npm_command("mcpdo"), "--format", "json"]
    on_demo = [*mcpdo, "--connection", demo.url]
    try:
        connect = ["connect", demo.url, "--era", era, "--elicit", "form"]
        connected = run_json([*mcpdo, *connect, "--header", f"Authorization: Bearer {demo.token}"], env)
        assert connected["protocolEra"] == era
        listed = run_json([*on_demo, "tools/list"], env)
        assert {tool["name"] for tool in listed["tools"]} >= DEMO_TOOLS

        called = run_json([*on_demo, "tools/call", "create_ticket", "subject:=mcpdo asks"], env)
        asked = called["elicitationPending"]
        assert asked["message"] == "Open a support ticket"
        assert list(asked["requestedSchema"]["properties"]) == ["body", "priority", "due"]
        # 2026-07-28 asks in an input_required result; 2025-11-25 with the server's own elicitation/create.
        assert asked["origin"] == {"modern": "input-required", "legacy": "server-request"}[era]
        answer = [asked["elicitationId"], "body:=Answered through mcpdo.", "priority:=high"]
        pk = run_json([*on_demo, "elicitation/respond", *answer], env)["structuredContent"]["pk"]
        assert ticket(demo, pk) == ("mcpdo asks", "Answered through mcpdo.", "high")
    finally:
        subprocess.run([*mcpdo, "daemon", "stop"], cwd=ROOT, env=env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make installs it")
def test_the_inspector_ui_lists_the_tools_and_files_tickets_by_its_form_and_by_the_app(demo, tmp_path):
    port, api_token = free_port(), secrets.token_hex(32)
    env = user_env(
        demo,
        tmp_path,
        CLIENT_PORT=str(port),
        # Its MCP Apps sandbox and app origin take ports of their own: any free ones, not the fixed defaults.
        MCP_SANDBOX_PORT="0",
        MCP_APP_ORIGIN_PORT="0",
        MCP_AUTO_OPEN_ENABLED="false",
        MCP_INSPECTOR_API_TOKEN=api_token,
        MCP_INSPECTOR_SECRET_STORE="memory",
    )
    # The page's command, started as a terminal would (exec: the process to stop is the Inspector itself).
    command = ["bash", "-c", "exec " + pointed_at(demo, example("inspector-web"))]
    log = tmp_path / "inspector.log"
    with log.open("wb") as output:  # a file, not a pipe that nobody reads
        inspector = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while "is up and running" not in log.read_text():
            assert inspector.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page = f"http://127.0.0.1:{port}/?MCP_INSPECTOR_API_TOKEN={api_token}"
        report = node_report("inspector_ui.mjs", page, str(ARTIFACTS), timeout=120)
    finally:
        stop_process(inspector, timeout=10)

    assert report["era"] == "MCP 2026-07-28"
    assert report["heading"] == "Tools (12)"  # the seven demo tools and the app-only submit tools of five
    assert report["listed"] == dict.fromkeys(sorted(DEMO_TOOLS), True)
    assert ticket(demo, report["pk"]) == (
        "Filed from the Inspector UI",
        "Typed into its form for create_ticket.",
        "high",
    )
    # Under Apps it renders mcpforms' own form, prefilled with what was given; submitted, it files the ticket.
    assert report["prefilled"] == "Filed through the form app"
    assert ticket(demo, report["submitted"]["pk"]) == (
        "Filed through the form app",
        "Typed into the form the Inspector renders.",
        "high",
    )
    for name in ("inspector-ui-tools", "inspector-ui-result", "inspector-ui-app", "inspector-ui-app-done"):
        assert (ARTIFACTS / f"{name}.png").read_bytes().startswith(b"\x89PNG")


# ---- mcp-remote, as a desktop host starts it ---------------------------------------------------------------


@pytest.mark.parametrize("option", [[], ["--protocol", "auto"]], ids=["default", "protocol-auto"])
def test_mcp_remote_started_from_the_desktop_config_relays_the_users_answers(demo, tmp_path, option):
    # The page's claude_desktop_config.json, as a user pastes it.
    (server,) = json.loads(example("desktop-mcp-remote-config"))["mcpServers"].values()
    assert DOCS_URL in server["args"] and TOKEN_PLACEHOLDER in server["env"]["AUTH_HEADER"]
    env = {name: value.replace(TOKEN_PLACEHOLDER, demo.token) for name, value in server["env"].items()}
    # The host adds PATH and HOME (the client below does too); here PATH leads to the pinned node 22, and
    # npx runs offline so it must find the pinned mcp-remote in node_modules instead of downloading one.
    env |= node_env(npm_config_offline="true", MCP_REMOTE_CONFIG_DIR=str(tmp_path / "mcp-auth"))
    args = [demo.url if argument == DOCS_URL else argument for argument in server["args"]] + option
    bridge = StdioServerParameters(command=server["command"], args=args, env=env, cwd=ROOT)
    asked: list[tuple[str, list[str]]] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append((params.message, list(params.requested_schema["properties"])))
        return types.ElicitResult(
            action="accept", content={"body": "Relayed by mcp-remote.", "priority": "high"}
        )

    async def scenario() -> tuple[str | None, list[str], types.CallToolResult, types.CallToolResult]:
        with (tmp_path / "mcp-remote.log").open("w") as errlog:
            # A desktop host opens with the 2025-11-25 handshake over stdio and declares form elicitation.
            transport = stdio_client(bridge, errlog=errlog)
            async with Client(transport, mode="legacy", elicitation_callback=answer, cache=None) as client:
                tools = [tool.name for tool in (await client.list_tools()).tools]
                complete = await client.call_tool("create_ticket", every_argument("Desktop host"))
                answered = await client.call_tool("create_ticket", {"subject": "Desktop host asks"})
                return client.protocol_version, tools, complete, answered

    version, tools, complete, answered = asyncio.run(scenario())
    log = (tmp_path / "mcp-remote.log").read_text()
    assert version == "2025-11-25", log[-4000:]
    assert set(tools) >= DEMO_TOOLS
    assert complete.structured_content is not None and answered.structured_content is not None
    assert ticket(demo, complete.structured_content["pk"]) == tuple(every_argument("Desktop host").values())
    assert asked == [("Open a support ticket", ["body", "priority", "due"])]
    pk = answered.structured_content["pk"]
    assert ticket(demo, pk) == ("Desktop host asks", "Relayed by mcp-remote.", "high")
    # With --protocol auto the bridge speaks 2026-07-28 to the server (and turns input_required into the
    # elicitation/create the host understands); by default it passes the host's 2025-11-25 session through.
    assert ("Remote server speaks MCP 2026-07-28" in log) == bool(option)


# ---- the Vercel AI SDK, openai-agents and pydantic-ai: called directly, no model involved ----------------


def test_the_ai_sdk_client_lists_executes_and_asks(demo):
    report = node_report("ai_sdk_client.mjs", demo.url, demo.token)
    assert report["protocolVersion"] == "2026-07-28"
    assert set(report["tools"]) >= DEMO_TOOLS
    assert ticket(demo, report["complete"]["pk"]) == ("AI SDK", "Every argument given.", "low")
    assert report["asked"] == [{"message": "Open a support ticket", "fields": ["body", "priority", "due"]}]
    assert ticket(demo, report["answered"]["pk"]) == ("AI SDK asks", "The AI SDK asked for this.", "high")
    # Without the elicitation capability nobody is asked: the result names what is missing.
    assert report["unasked"]["isError"]
    assert "- Body (body): This field is required." in report["unasked"]["content"][0]["text"]


def test_the_ai_sdk_page_executes_a_tool_and_its_handler_answers(demo, tmp_path):
    before = ticket_count(demo)
    output = script(pointed_at(demo, example("ai-sdk-client")), user_env(demo, tmp_path), node=True)
    assert output.startswith("Open a support ticket\n"), output
    assert newest_ticket(demo) == LIFT and ticket_count(demo) == before + 1


# The TypeScript page's two clients, each with the era it speaks against mcpforms.
TYPESCRIPT_PAGE = {
    "v2": (lambda: example("typescript-client"), "2026-07-28"),
    "v1": (lambda: example("typescript-v1-client"), "2025-11-25"),
}


@pytest.mark.parametrize("sdk", sorted(TYPESCRIPT_PAGE))
def test_the_typescript_page_files_a_ticket_its_handler_answers(demo, tmp_path, sdk):
    code, era = TYPESCRIPT_PAGE[sdk]
    before = ticket_count(demo)
    output = script(pointed_at(demo, code()), user_env(demo, tmp_path), node=True)
    assert output.startswith(f"{era}\nOpen a support ticket\n"), output
    assert newest_ticket(demo) == LIFT and ticket_count(demo) == before + 1


def test_openai_agents_lists_calls_and_is_told_what_is_missing(demo):
    async def scenario() -> tuple[str | None, list[str], types.CallToolResult, types.CallToolResult]:
        headers = {"Authorization": f"Bearer {demo.token}"}
        async with MCPServerStreamableHttp({"url": demo.url, "headers": headers}, name="mcpforms") as server:
            assert server.session is not None
            tools = [tool.name for tool in await server.list_tools()]
            complete = await server.call_tool("create_ticket", every_argument("OpenAI Agents"))
            # openai-agents declares no elicitation: the result names what is missing, for the model to ask.
            missing = await server.call_tool("create_ticket", {"subject": "OpenAI Agents, half done"})
            return server.session.protocol_version, tools, complete, missing

    before = demo.rows("select count(*) from demo_ticket")[0][0]
    version, tools, complete, missing = asyncio.run(scenario())
    assert version == "2026-07-28"
    assert set(tools) >= DEMO_TOOLS
    assert not complete.is_error and complete.structured_content is not None
    assert ticket(demo, complete.structured_content["pk"]) == tuple(every_argument("OpenAI Agents").values())
    assert missing.is_error
    assert "- Body (body): This field is required." in missing.content[0].text  # type: ignore[union-attr]
    assert demo.rows("select count(*) from demo_ticket")[0][0] == before + 1
    assert missing.content[0].text == example("openai-agents-missing").rstrip("\n")  # type: ignore[union-attr]


def test_the_openai_agents_page_lists_the_tools_and_files_a_ticket(demo, tmp_path):
    tools, ticket_line = script(
        pointed_at(demo, example("openai-agents-client")), user_env(demo, tmp_path)
    ).splitlines()
    assert set(json.loads(tools.replace("'", '"'))) == DEMO_TOOLS
    assert "'subject': 'Lift stuck', 'body': 'On floor 3.', 'priority': 'high'" in ticket_line
    assert newest_ticket(demo) == ("Lift stuck", "On floor 3.", "high")


# pydantic-ai 2.68 warns, on every 2026-07-28 connection, that its elicitation handler "will never be
# called"; the handler is called all the same (FastMCP answers input_required through it), as this shows.
@pytest.mark.filterwarnings("ignore:`elicitation_handler` will never be called:UserWarning")
def test_pydantic_ai_lists_calls_and_asks(demo):
    asked: list[tuple[str, list[str]]] = []

    async def answer(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
        asked.append((message, list(params.requested_schema["properties"])))
        return {"body": "Pydantic AI asked for this.", "priority": "high"}

    async def scenario() -> tuple[str | None, list[str], Any, Any]:
        headers = {"Authorization": f"Bearer {demo.token}"}
        async with MCPToolset(demo.url, headers=headers, elicitation_handler=answer) as toolset:
            tools = [tool.name for tool in await toolset.list_tools()]
            complete = await toolset.direct_call_tool("create_ticket", every_argument("Pydantic AI"))
            answered = await toolset.direct_call_tool("create_ticket", {"subject": "Pydantic AI asks"})
            return toolset.client.protocol_version, tools, complete, answered

    version, tools, complete, answered = asyncio.run(scenario())
    assert version == "2026-07-28"
    assert set(tools) >= DEMO_TOOLS
    assert ticket(demo, complete["pk"]) == tuple(every_argument("Pydantic AI").values())
    assert asked == [("Open a support ticket", ["body", "priority", "due"])]
    assert ticket(demo, answered["pk"]) == ("Pydantic AI asks", "Pydantic AI asked for this.", "high")


def test_the_pydantic_ai_page_asks_in_the_terminal_and_files_a_ticket(demo, tmp_path):
    code = pointed_at(demo, example("pydantic-ai-client"))
    # The user types the body and the priority, and leaves the optional due date empty.
    output = script(code, user_env(demo, tmp_path), stdin="The lift is stuck on floor 3.\nhigh\n\n")
    typed = [("body: ", "The lift is stuck on floor 3."), ("priority: ", "high"), ("due: ", "")]
    assert matches(output, piped(example("pydantic-ai-transcript"), typed)), output
    assert newest_ticket(demo) == LIFT


# ---- fastmcp with a token, and curl by hand --------------------------------------------------------------


def test_fastmcp_with_a_token_lists_the_tools_and_asks_on_the_terminal(demo):
    # The demo tutorial's anonymous `fastmcp call` is in test_demo_tools.py; this one acts for the staff
    # user, and reads the results with --json, as a script would.
    fastmcp = [str(Path(sys.executable).with_name("fastmcp"))]
    auth = ["--auth", demo.token]
    listed = run_json([*fastmcp, "list", demo.url, *auth, "--json"], dict(os.environ))
    assert {tool["name"] for tool in listed["tools"]} >= DEMO_TOOLS

    # It prints each question and reads the answers, one a line, from standard input; then the result.
    call = [*fastmcp, "call", demo.url, "create_ticket", "subject=fastmcp asks", *auth, "--json"]
    done = run(call, dict(os.environ), stdin="Typed on the terminal.\nhigh\n\n")
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.startswith("\nServer asks: Open a support ticket\n")
    result = json.loads(done.stdout[done.stdout.index("{\n") :])
    assert ticket(demo, result["structured_content"]["pk"]) == (
        "fastmcp asks",
        "Typed on the terminal.",
        "high",
    )


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_curl_page_signs_up_in_one_call(demo, tmp_path):
    response = json.loads(shell(pointed_at(demo, example("curl-signup")), user_env(demo, tmp_path)))
    assert response == json.loads(example("curl-signup-output"))
    assert response["result"]["structuredContent"] == {
        "created": True,
        "email": "ada@example.com",
        "plan": "pro",
    }


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_curl_page_asks_then_completes_with_the_answer(demo, tmp_path):
    env = user_env(demo, tmp_path)
    asked = json.loads(shell(pointed_at(demo, example("curl-ask")), env))
    shown = json.loads(example("curl-ask-output"))
    state = asked["result"].pop("requestState")
    assert shown["result"].pop("requestState") == "..."  # the page's stand-in for the signed value
    assert asked == shown
    # What the user does: keep the requestState in STATE, then send the answer.
    answered = json.loads(shell(pointed_at(demo, example("curl-answer")), {**env, "STATE": state}))
    complete = json.loads(example("curl-signup-output"))
    assert answered == {**complete, "id": 2}
