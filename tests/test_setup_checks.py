"""Setup mistakes a new user makes, caught by ``manage.py check`` in a project of their own: a
``mcp_tools.py`` that no app contains, and password or file fields with nowhere to fill them in."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

SETTINGS = """
SECRET_KEY = "setup-checks-0123456789abcdef0123456789abcdef"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "mcpforms", *EXTRA_APPS]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
ROOT_URLCONF = "site_pkg.urls"
ALLOWED_HOSTS = ["forms.example.com"]
USE_TZ = True
MCPFORMS = MCPFORMS_SETTING
"""
MCP_TOOLS = """
from django import forms

import mcpforms


class VaultForm(forms.Form):
    username = forms.CharField()
    password = forms.CharField(widget=forms.PasswordInput)


mcpforms.register(VaultForm)
"""


def check(tmp_path: Path, *, extra_apps: list[str], mcpforms: dict[str, Any], urls: str) -> str:
    """Run ``manage.py check`` (as ``django-admin``) in a project made of the given pieces; its output."""
    package = tmp_path / "site_pkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    settings = SETTINGS.replace("EXTRA_APPS", repr(extra_apps)).replace("MCPFORMS_SETTING", repr(mcpforms))
    (package / "settings.py").write_text(settings)
    (package / "urls.py").write_text(textwrap.dedent(urls))
    # This checkout first after the project: the virtualenv's editable install may point at another one.
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        "DJANGO_SETTINGS_MODULE": "site_pkg.settings",
    }
    env.pop("DATABASE_URL", None)
    run = subprocess.run(
        [sys.executable, "-m", "django", "check"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    return run.stdout + run.stderr


NO_URLS = "urlpatterns = []\n"
PAGE_URLS = """
from django.urls import include, path

import mcpforms.api

urlpatterns = [path("mcp", mcpforms.api.urls), path("", include("mcpforms.urls"))]
"""


def test_a_mcp_tools_module_next_to_settings_is_named_as_never_imported(tmp_path):
    (tmp_path / "site_pkg").mkdir()
    (tmp_path / "site_pkg" / "mcp_tools.py").write_text(MCP_TOOLS)
    output = check(tmp_path, extra_apps=[], mcpforms={}, urls=NO_URLS)
    stray = tmp_path / "site_pkg" / "mcp_tools.py"
    assert (
        f"mcpforms.W102) No form is registered as an MCP tool. {stray} belongs to no installed app" in output
    )
    assert "Put mcp_tools.py inside an app listed in INSTALLED_APPS" in output


def test_the_same_module_inside_an_installed_app_registers_its_form(tmp_path):
    app = tmp_path / "vault"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "mcp_tools.py").write_text(MCP_TOOLS)
    # No BASE_URL and no URL-mode page: the password could never be asked for.
    output = check(tmp_path, extra_apps=["vault"], mcpforms={}, urls=NO_URLS)
    assert "W102" not in output
    assert (
        "mcpforms.W103) Tools that ask for a password or a file (vault) need the URL-mode page, but "
        "MCPFORMS['BASE_URL'] and mcpforms.urls are missing: they will answer every call with an error."
        in output
    )
    only_urls = check(tmp_path, extra_apps=["vault"], mcpforms={}, urls=PAGE_URLS)
    assert "but MCPFORMS['BASE_URL'] is missing" in only_urls
    ready = check(
        tmp_path, extra_apps=["vault"], mcpforms={"BASE_URL": "https://forms.example.com"}, urls=PAGE_URLS
    )
    assert "W103" not in ready and "System check identified no issues" in ready


def test_an_endpoint_in_no_urlconf_is_said_by_the_check(tmp_path):
    output = check(tmp_path, extra_apps=[], mcpforms={}, urls=NO_URLS)
    assert "(mcpforms.W005) No MCP endpoint is in the URLconf: every client gets 404 Not Found." in output
    assert 'HINT: Add path("mcp", mcpforms.api.urls) to urlpatterns in your urls.py' in output
    mounted = check(tmp_path, extra_apps=[], mcpforms={}, urls=PAGE_URLS)
    assert "W005" not in mounted


def test_a_base_url_whose_host_django_refuses_is_an_error(tmp_path):
    behind_a_proxy = {"BASE_URL": "https://public.example.com"}
    output = check(tmp_path, extra_apps=[], mcpforms=behind_a_proxy, urls=PAGE_URLS)
    assert (
        "(mcpforms.E022) MCPFORMS['BASE_URL'] is 'https://public.example.com', but its host "
        "'public.example.com' is not in ALLOWED_HOSTS"
    ) in output
    assert "HINT: Add 'public.example.com' to ALLOWED_HOSTS" in output
    served = check(
        tmp_path, extra_apps=[], mcpforms={"BASE_URL": "https://forms.example.com:8443"}, urls=PAGE_URLS
    )
    assert "E022" not in served


OAUTH_URLS = """
from django.urls import include, path

import mcpforms.api

urlpatterns = [path("mcp", mcpforms.api.urls)]
"""
SIGN_IN = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "https://forms.example.com"}


def test_oauth_without_its_app_installed_is_e304_not_a_traceback(tmp_path):
    output = check(tmp_path, extra_apps=[], mcpforms=SIGN_IN, urls=OAUTH_URLS)
    assert "Traceback" not in output and "RuntimeError" not in output
    assert "(mcpforms.E304) mcpforms.oauth.OAuth2Auth needs django-oauth-toolkit's app" in output


SIGN_IN_URLS = (
    OAUTH_URLS + '\nimport mcpforms.oauth\n\nurlpatterns += [path("", include(mcpforms.oauth.urls))]\n'
)


def test_oauth_urls_mounted_without_the_toolkits_app_are_e304_not_a_traceback(tmp_path):
    # The how-to's step 3 taken and step 2's INSTALLED_APPS line missed: Django's URL check imports the
    # URLconf, and the toolkit's views import models Django refuses outside an installed app.
    output = check(tmp_path, extra_apps=[], mcpforms=SIGN_IN, urls=SIGN_IN_URLS)
    assert "Traceback" not in output and "RuntimeError" not in output, output
    assert "(mcpforms.E304) mcpforms.oauth.OAuth2Auth needs django-oauth-toolkit's app" in output
