"""The documentation site as a reader gets it: built as ``make docs`` builds it (warnings are errors), every
link inside it leads to a file and an anchor that exist (checked offline, over the HTML), and in Debian's
chromium every page is reachable from the index through the navigation and loads without an error.

External links are listed, never fetched: the build must pass offline. They must be https, but for the
local demo's own address."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.e2e.node import node_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# Pages Sphinx writes itself, which no toctree lists: the index of terms, the search, the module index.
GENERATED = {"genindex.html", "search.html", "py-modindex.html"}
# Where an http:// link may point: the demo that `make run` serves on this machine.
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs-site") / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-E", "-q", "-b", "html"]
    build = subprocess.run(
        [*command, str(ROOT / "docs"), str(out)], capture_output=True, text=True, timeout=600
    )
    assert build.returncode == 0, build.stderr[-6000:]
    return out


class Page(HTMLParser):
    """The ids of one HTML file, and every ``href`` and ``src`` in it."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in ("href", "src"):
                self.links.append(value)


def read_site(site: Path) -> dict[Path, Page]:
    return {path: Page(path.read_text(encoding="utf-8")) for path in sorted(site.rglob("*.html"))}


def check_links(site: Path) -> tuple[list[str], dict[str, set[str]]]:
    """Every broken link inside ``site`` ("page: link (why)"), and the external links, each with the pages
    that have it."""
    pages = read_site(site)
    broken: list[str] = []
    external: dict[str, set[str]] = {}
    for path, page in pages.items():
        here = str(path.relative_to(site))
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https"):
                external.setdefault(link, set()).add(here)
                continue
            if parts.scheme or parts.netloc:  # mailto:, data:, javascript:
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.is_relative_to(site.resolve()) or not target.is_file():
                broken.append(f"{here}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else Page(target.read_text(encoding="utf-8")).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{here}: {link} (no element with that id)")
    return broken, external


def test_every_link_inside_the_site_leads_to_a_file_and_an_anchor_that_exist(site):
    broken, _external = check_links(site.resolve())
    assert not broken, "\n".join(broken)


def test_external_links_are_https_but_for_the_local_demo(site):
    _broken, external = check_links(site.resolve())
    for link, pages in sorted(external.items()):  # listed with -rP: what the site links to, never fetched
        shown = sorted(pages)
        print(link, "←", ", ".join(shown[:3]), f"and {len(shown) - 3} more" if len(shown) > 3 else "")
    plain = [
        link for link in external if link.startswith("http:") and urlsplit(link).hostname not in LOCAL_HOSTS
    ]
    assert not plain, plain


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browsed(served: str) -> dict[str, Any]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium: make installs it")
    pages: dict[str, Any] = node_report("docs_site.mjs", served, timeout=300)["pages"]
    return pages


def test_every_page_is_reachable_from_the_index_through_the_navigation(site, browsed):
    built = {str(path.relative_to(site)) for path in site.rglob("*.html")} - GENERATED
    assert set(browsed) == built, {
        "unreachable": sorted(built - set(browsed)),
        "not built": sorted(set(browsed) - built),
    }


def test_every_page_loads_without_an_error_and_shows_its_title(browsed):
    failing = {path: page["problems"] for path, page in browsed.items() if page["problems"]}
    assert not failing, failing
    untitled = [path for path, page in browsed.items() if not page["heading"] or not page["title"]]
    assert not untitled, untitled


# What clients, browsers and `manage.py check` print, as a reader pastes it into the search box; the
# troubleshooting page is headed by these, and the search must lead there (issue 35, item 13).
SYMPTOMS = [
    "Error: Not Found",  # fastmcp, against a project that mounts no endpoint
    "Registration failed: 404",  # fastmcp or the SDK without a token, on a site without sign-in
    "TypeError: fetch failed",  # mcp-remote, sent to a BASE_URL it cannot reach
    "Bad Request (400)",  # Django, for a host not in ALLOWED_HOSTS
    "Forbidden: the Origin 'https://forms.example.com' is not allowed",  # behind an https proxy
    "NoReverseMatch at /oauth/authorize/",  # LOGIN_URL naming no URL
    "Reverse for 'login' not found",
    "Error: Tool callback not found.",  # fastmcp, for a tool the caller may not use
    "The database is unavailable; retry shortly",  # -32010
    "429 Too Many Requests",
    "database is locked",  # SQLite with Django's defaults
    "Invalid or expired requestState",
    "Unauthorized: send an access token",
]
TROUBLESHOOTING = "howto/troubleshooting.html"


def test_the_search_finds_the_troubleshooting_page_for_what_clients_print(served):
    page = " ".join((ROOT / "docs" / "howto" / "troubleshooting.md").read_text().split())
    assert not [symptom for symptom in SYMPTOMS if symptom not in page]
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium: make installs it")
    results: dict[str, list[str]] = node_report("docs_search.mjs", served, *SYMPTOMS, timeout=180)["results"]
    # Among the first five pages found, as a reader sees them without scrolling.
    missed = {
        symptom: found[:5]
        for symptom, found in results.items()
        if not any(link.startswith(TROUBLESHOOTING) for link in found[:5])
    }
    assert not missed, missed
