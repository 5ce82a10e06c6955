"""Real clients that try to sign in to a site that signs in with personal access tokens only: the Python
SDK's OAuth provider and fastmcp, told 401, probe for OAuth and print the site's one sentence that says
to use a token, on both protocol eras, instead of Django's 404 page."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from mcpforms.discovery import USE_A_TOKEN
from tests.conformance.run import ROOT, running_server
from tests.e2e.test_oauth_clients import MemoryStorage

ERAS = {"2026-07-28": "2026-07-28", "2025-11-25": "legacy"}
SETTINGS = """
from tests.settings import *  # noqa: F403

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": THE_FILE}}
ROOT_URLCONF = "tests.urls_token_only"
MCPFORMS = {"AUTHENTICATION": ["mcpforms.auth.AccessTokenAuth"]}
"""


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("token-only")
    database = directory / "site.sqlite3"
    (directory / "token_only_settings.py").write_text(SETTINGS.replace("THE_FILE", repr(str(database))))
    env = {
        **os.environ,
        "PYTHONPATH": f"{directory}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": "token_only_settings",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput"]
    migrated = subprocess.run(migrate, cwd=ROOT, env=env, capture_output=True, text=True)
    assert migrated.returncode == 0, migrated.stderr
    with running_server(directory / "server.log", env=env) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def _never(url: str) -> None:
    raise AssertionError(f"the client was sent to sign in at {url}")


@pytest.mark.parametrize("era", ERAS)
def test_the_python_sdk_is_told_to_use_a_personal_access_token(endpoint, era):
    metadata = OAuthClientMetadata(
        client_name="mcpforms e2e",
        redirect_uris=["http://127.0.0.1:3030/callback"],  # type: ignore[list-item]
    )
    provider = OAuthClientProvider(
        server_url=endpoint,
        client_metadata=metadata,
        storage=MemoryStorage(),
        redirect_handler=_never,
        callback_handler=_never,  # type: ignore[arg-type]
    )

    async def scenario() -> None:
        http = httpx2.AsyncClient(auth=provider, timeout=30)
        transport = streamable_http_client(endpoint, http_client=http)
        async with http, Client(transport, mode=ERAS[era], cache=None) as mcp:
            # 2026-07-28's server/discover needs no credentials: the first call of a tool list does.
            await mcp.list_tools()
            raise AssertionError("listed the tools without a token")

    with pytest.raises(BaseException) as failed:
        asyncio.run(scenario())
    told = _messages(failed.value)
    assert any("Registration failed: 404" in message and USE_A_TOKEN in message for message in told), told


def _messages(error: BaseException) -> list[str]:
    """The messages of an error and of every error it groups or was caused by."""
    found = [str(error)]
    for inner in getattr(error, "exceptions", ()):
        found += _messages(inner)
    if error.__cause__ is not None:
        found += _messages(error.__cause__)
    return found


def test_fastmcp_without_auth_prints_the_sentence_not_a_page(endpoint):
    fastmcp = str(Path(sys.executable).with_name("fastmcp"))
    run = subprocess.run([fastmcp, "list", endpoint], capture_output=True, text=True, timeout=120)
    printed = " ".join((run.stdout + run.stderr).split())  # fastmcp wraps long lines
    assert run.returncode != 0
    assert "personal access token" in printed and "mcpforms_token create USERNAME" in printed
    assert "<html" not in printed.lower() and "Page not found" not in printed
