"""What every test needs, whatever its module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from oauth2_provider.views.mixins import OAuthLibMixin


def forget_oauthlib_cores() -> None:
    """Drop the oauthlib core each django-oauth-toolkit view class keeps from its first request (its
    validator and backend included): it is built from the settings that request saw, whatever
    ``override_settings`` says later, so a test would otherwise be served with another test's settings."""
    classes: list[type] = [OAuthLibMixin]
    while classes:
        view = classes.pop()
        classes += view.__subclasses__()
        if "_oauthlib_core" in vars(view):
            delattr(view, "_oauthlib_core")


@pytest.fixture(autouse=True)
def fresh_oauthlib_cores() -> Iterator[None]:
    yield
    forget_oauthlib_cores()


# Who signs in, and the client they sign in with, in the tests of OAuth and tokens.
REDIRECT = "http://127.0.0.1:8976/callback"


@pytest.fixture
def ada() -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("ada", password="pw")


@pytest.fixture
def application() -> Any:
    """A public client that may sign in with the authorization code flow, its consent already given."""
    from oauth2_provider.models import Application

    return Application.objects.create(
        name="An MCP client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
        skip_authorization=True,
    )
