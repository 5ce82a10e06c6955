"""The TypeScript SDK v2 client (``@modelcontextprotocol/client`` 2.4.0) against a real server process."""

from __future__ import annotations

from tests.e2e.node import node_report


def test_auto_negotiation_and_an_elicitation_round_trip(server_url):
    report = node_report("ts_client.mjs", server_url)
    assert report["protocolVersion"] == "2026-07-28"
    assert "test_input_required_result_elicitation" in report["tools"]
    assert report["asked"] == [
        "What is your name?",
        "Step 1: What is your name?",
        "Step 2: What is your favorite color?",
    ]
    assert report["greeting"] == [{"type": "text", "text": "Hello, Ada!"}]
    assert report["rounds"] == [{"type": "text", "text": "Ada likes blue."}]
