"""Fuzz a wizard's App submit tool (``<name>_submit``, its Next and Back) on both eras: whatever values and
state it receives — the state of any step reached, of Back, tampered, truncated, another wizard's, another
server's, the rounds' own, one of an older version of the wizard, a signed one holding anything — the
answer is a result or a clear refusal: never a 500, a -32603 or a traceback, and the handler never runs
twice for one flow."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from hypothesis import event, given
from hypothesis import strategies as st

from mcpforms.protocol.era2025.sessions import MemorySessions
from mcpforms.protocol.server import Server
from mcpforms.protocol.state import ANONYMOUS, dump_state
from mcpforms.registry import register, registry_for
from mcpforms.ui import STEP_BACK, STEP_STATE
from mcpforms.wizards import WizardTool
from tests import wire
from tests.protocol.test_fuzz import (
    ELICITING,
    FORM_FIELDS,
    FORM_SETTINGS,
    LEGACY,
    ONE_ADDRESS,
    VERSION,
    assert_json_rpc,
    assert_json_rpc_2025,
    assert_no_crash,
    assert_parse_error,
    field_values,
    form_server,
    http,
    json_values,
    spliced,
    sse_events,
)
from tests.test_wizard_formsets import TeamWizard
from tests.test_wizards import TravelRequestWizard

wizard_server = Server(key="fuzz-wizards", name="fuzz-wizards", sessions=MemorySessions())
register(TravelRequestWizard, server=wizard_server)
register(TeamWizard, server=wizard_server)
# Each wizard's class, whose ``handled`` its handler appends to on every run (other tests put a new list).
WIZARDS: dict[str, Any] = {"travel_request": TravelRequestWizard, "team": TeamWizard}
# What the App sends for each step, valid: a walk reaches the later steps (and Back) before the fuzzing.
VALID_STEPS: dict[str, list[dict[str, Any]]] = {
    "travel_request": [
        {"destination": "Tokyo", "international": True},
        {"passport_number": "X1234567"},
        {"start": "2027-01-02", "budget": 900},
    ],
    "team": [{"team": "Owls"}, {"members": [{"name": "Ada", "age": 30}]}, {"remarks": "none"}],
}
HOST = wire.APPS | ELICITING

rows = st.lists(st.dictionaries(st.sampled_from(["name", "age", "zz"]), field_values, max_size=3), max_size=4)


def submitted_values(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    """A step's values as a client might send them: any field of any step, numbers no double holds, rows."""
    values = st.dictionaries(st.sampled_from(FORM_FIELDS[tool]), field_values, max_size=5)
    if tool == "team":
        return st.tuples(values, st.none() | rows).map(
            lambda pair: pair[0] if pair[1] is None else {**pair[0], "members": pair[1]}
        )
    return values


def signed_states(tool: str) -> st.SearchStrategy[str]:
    """States this server signed for the App of ``tool``, holding anything: answers of any shape, any step
    pending, any round count; of this version of the wizard, or of another."""
    form_tool = registry_for(wizard_server).form_tool(tool)
    assert isinstance(form_tool, WizardTool)
    names = [*form_tool.steps, *FORM_FIELDS[tool], "zz"]
    return st.builds(
        lambda answers, pending, rounds, current: dump_state(
            server=wizard_server.key,
            tool=f"app:{tool}",
            arguments={},
            principal=ANONYMOUS,
            answers=answers,
            pending=pending,
            version=form_tool.digest if current else "0" * 16,
            rounds=rounds,
        ),
        st.dictionaries(st.sampled_from(names), json_values | submitted_values(tool), max_size=4),
        st.lists(st.sampled_from(names), max_size=4),
        st.integers(1, 20),
        st.booleans(),
    )


def changed(state: str, data: st.DataObject) -> str:
    """``state`` with one character changed, or cut short."""
    at = data.draw(st.integers(0, 10_000)) % len(state)  # the state's length varies with its timestamp
    if data.draw(st.booleans()):
        return state[:at]
    return state[:at] + ("A" if state[at] != "A" else "B") + state[at + 1 :]


# ---- the 2026-07-28 era ---------------------------------------------------------------------------------


def modern(
    target: Server, name: str, arguments: dict[str, Any], **params: Any
) -> tuple[HttpResponseBase, bool]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": name, "arguments": arguments, "_meta": wire.meta(HOST), **params}
    body, refused = spliced(message)
    headers = {"HTTP_MCP_PROTOCOL_VERSION": VERSION, "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": name}
    return http(target, "POST", body, **headers), refused


def modern_result(target: Server, name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    response, _ = modern(target, name, arguments, **params)
    assert_json_rpc(response, "tools/call")
    result: dict[str, Any] = json.loads(response.content)["result"]  # type: ignore[attr-defined]
    return result


def shown_state(result: dict[str, Any]) -> str | None:
    content = result.get("structuredContent")
    state = content.get(STEP_STATE) if isinstance(content, dict) else None
    return state if isinstance(state, str) else None


def walked_states(tool: str, data: st.DataObject) -> list[str]:
    """The states of the steps a user reached in the App: the call's, then each Next (or a Back)."""
    states = [state for state in [shown_state(modern_result(wizard_server, tool, {}))] if state]
    for values in VALID_STEPS[tool][: data.draw(st.integers(0, len(VALID_STEPS[tool]) - 1))]:
        back = data.draw(st.sampled_from([False, False, False, True]))
        sent = {**values, STEP_STATE: states[-1], **({STEP_BACK: True} if back else {})}
        state = shown_state(modern_result(wizard_server, f"{tool}_submit", sent))
        if state is None:
            break
        states.append(state)
    return states


def any_state(tool: str, data: st.DataObject, states: list[str]) -> Any:
    other = "team" if tool == "travel_request" else "travel_request"
    kind = data.draw(
        st.sampled_from(
            [
                "walked",
                "walked",
                "changed",
                "other wizard",
                "other server",
                "rounds",
                "signed",
                "json",
                "text",
            ]
        )
    )
    event(f"state: {kind}")
    if kind == "walked":
        return data.draw(st.sampled_from(states))
    if kind == "changed":
        return changed(data.draw(st.sampled_from(states)), data)
    if kind == "other wizard":
        return shown_state(modern_result(wizard_server, other, {}))
    if kind == "other server":
        return shown_state(modern_result(form_server, tool, {}))
    if kind == "rounds":  # what a client that elicits gets: the rounds' requestState, not the App's
        response, _ = modern(wizard_server, tool, {}, _meta=wire.meta(ELICITING))
        return json.loads(response.content)["result"].get("requestState")  # type: ignore[attr-defined]
    if kind == "signed":
        return data.draw(signed_states(tool))
    return data.draw(json_values if kind == "json" else st.text(max_size=60))


def fuzzed_submit(tool: str, data: st.DataObject, states: list[str]) -> dict[str, Any]:
    arguments = data.draw(submitted_values(tool))
    if data.draw(st.integers(0, 9)):  # now and then, no state at all
        arguments[STEP_STATE] = any_state(tool, data, states)
    if data.draw(st.booleans()):
        arguments[STEP_BACK] = data.draw(st.sampled_from([True, False]) | json_values)
    return arguments


def finished(result: dict[str, Any] | None) -> bool:
    """Whether a submit's result is the wizard's outcome: no step to show, no refusal."""
    return result is not None and not result.get("isError") and shown_state(result) is None


@ONE_ADDRESS
@pytest.mark.django_db
@FORM_SETTINGS
@given(data=st.data(), tool=st.sampled_from(list(WIZARDS)))
def test_a_wizards_app_submit_answers_any_state_and_values_clearly_on_2026(data: st.DataObject, tool: str):
    handled = WIZARDS[tool].handled
    before = len(handled)
    arguments = fuzzed_submit(tool, data, walked_states(tool, data))
    answers = []
    for _ in range(2):  # the same submit replayed: the handler runs once at most
        response, refused = modern(wizard_server, f"{tool}_submit", arguments)
        if refused:
            assert_parse_error(response)
            return
        assert_json_rpc(response, "tools/call")
        answers.append(json.loads(response.content).get("result"))  # type: ignore[attr-defined]
    assert len(handled) - before <= 1
    if finished(answers[0]):
        assert answers[1] == answers[0]
        assert len(handled) - before == 1


# ---- the 2025-11-25 era: the same submit in a session -----------------------------------------------------


def open_session() -> str:
    params = {"protocolVersion": LEGACY, "capabilities": HOST, "clientInfo": {"name": "fuzz", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode()
    response = http(wizard_server, "POST", body)
    assert response.status_code == 200, response
    session: str = response["Mcp-Session-Id"]
    return session


def legacy(session: str, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The result of a 2025-era call (None for a refusal), after checking every message on its stream;
    whether decode() refused the body instead."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    body, refused = spliced(message)
    response = http(
        wizard_server, "POST", body, HTTP_MCP_SESSION_ID=session, HTTP_MCP_PROTOCOL_VERSION=LEGACY
    )
    if refused:
        assert_parse_error(response)
        return None, True
    assert response.status_code in (200, 400), response
    assert isinstance(response, HttpResponse)
    if response["Content-Type"] == "application/json":
        final = json.loads(response.content)
    else:
        messages = [message for _, message in sse_events(response) if message is not None]
        for each in messages:
            assert_no_crash(each)
        final = messages[-1]
    assert_json_rpc_2025(final)
    event("2025: " + ("result" if "result" in final else f"error {final['error']['code']}"))
    return final.get("result"), False


# A 2025-era call runs on a worker thread (it may log to the stream), which sees committed rows only.
@ONE_ADDRESS
@pytest.mark.django_db(transaction=True)
@FORM_SETTINGS
@given(data=st.data(), tool=st.sampled_from(list(WIZARDS)))
def test_a_wizards_app_submit_answers_any_state_and_values_clearly_on_a_2025_session(
    data: st.DataObject, tool: str
):
    session = open_session()
    shown, _ = legacy(session, tool, {})
    states = [state for state in [shown_state(shown or {})] if state]
    for values in VALID_STEPS[tool][: data.draw(st.integers(0, len(VALID_STEPS[tool]) - 1))]:
        next_step, _ = legacy(session, f"{tool}_submit", {**values, STEP_STATE: states[-1]})
        if (state := shown_state(next_step or {})) is None:
            break
        states.append(state)
    handled = WIZARDS[tool].handled
    before = len(handled)
    arguments = fuzzed_submit(tool, data, states)
    first, refused = legacy(session, f"{tool}_submit", arguments)
    if refused:
        return
    again, _ = legacy(session, f"{tool}_submit", arguments)
    assert len(handled) - before <= 1
    if finished(first):
        assert again == first
