"""The docs' examples: each named block is unique and fetched by a test, ``example()`` finds blocks as MyST
reads them, and docs/conftest.py runs every page to its contract (on pages of its own, in a pytest of
their own)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from tests.docs_examples import DOCS, ROOT, code_blocks, example, named_blocks, pages, read

# Where the tests that fetch named blocks live.
TEST_FOLDERS = (ROOT / "tests", ROOT / "project" / "tests")


def fetched_names() -> set[str]:
    """Every ``example("<name>")`` a test module calls with a literal name."""
    names = set()
    for folder in TEST_FOLDERS:
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                    continue
                function = node.func
                called = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
                if called == "example" and isinstance(node.args[0].value, str):
                    names.add(node.args[0].value)
    return names


def test_every_name_is_used_once():
    twice = {
        name: [str(block) for block in blocks] for name, blocks in named_blocks().items() if len(blocks) > 1
    }
    assert not twice, f"names used by more than one block: {twice}"


def test_every_named_block_is_fetched_by_a_test():
    unfetched = sorted(set(named_blocks()) - fetched_names())
    assert not unfetched, (
        f"named blocks no test fetches with example(name) (a named block never runs): {unfetched}"
    )


# What only a project's settings.py or urls.py gives a block: a reader adds to startproject's lists there,
# and BASE_DIR is defined there.
PROJECT_LINES = re.compile(
    r"^\s*(urlpatterns|INSTALLED_APPS|MIDDLEWARE)\s*(\+?=|\.(append|insert|extend)\()|\bBASE_DIR\b", re.M
)


def test_every_block_aimed_at_a_project_file_is_pasted_into_one():
    # A block that adds to urlpatterns or INSTALLED_APPS, or reads BASE_DIR, is captioned with its file
    # (settings.py, urls.py), so the harness runs it where a reader pastes it. Invisible set-up that
    # gave such a block its imports or its list hid that it failed when pasted (`NameError: include`).
    hidden = [
        str(block)
        for path in pages()
        for block in code_blocks(read(path))
        if block.language == "python" and block.project_file is None and PROJECT_LINES.search(block.source)
    ]
    assert not hidden, f"caption these settings.py or urls.py, and show their imports: {hidden}"


# An install of mcpforms (not on PyPI yet): from its checkout, an extra quoted, as zsh needs brackets to be.
INSTALL = re.compile(r"pip install\s+(?P<what>[^\s`]+)")
# (the one written as `{extra}` is the template every check's hint fills in, mcpforms.conf.install_extra)
FROM_CHECKOUT = re.compile(r'path/to/mcpforms|"path/to/mcpforms\[([\w,-]+|\{extra\})\]"')


def test_every_install_of_mcpforms_is_from_its_checkout_with_the_extra_quoted():
    sources = [*pages(), ROOT / "README.md", *sorted((ROOT / "mcpforms").rglob("*.py"))]
    wrong = [
        f"{path.relative_to(ROOT)}: pip install {found['what']}"
        for path in sources
        for found in INSTALL.finditer(path.read_text(encoding="utf-8"))
        if "mcpforms" in found["what"] and not FROM_CHECKOUT.fullmatch(found["what"])
    ]
    assert not wrong, wrong


def test_no_page_writes_a_code_block_with_a_colon_fence():
    # The harness reads backtick and tilde fences: a `:::{code-block}` would be shown but never run.
    found = [
        str(path)
        for path in pages()
        if re.search(r"^\s*:{3,}\{(code-block|code|sourcecode)\}", path.read_text(), re.M)
    ]
    assert not found, f"write code blocks with ``` fences, not ::: (they would not run): {found}"


# example() ------------------------------------------------------------------------------------------------

PAGE = """\
# A page

```{code-block} python
:caption: The call
:name: call-it

print("hello")
```

````markdown
How to name a block:

```{code-block} sh
:name: shown-not-named
```
````

````{note}
```{code-block} json
:name: in-a-note
{"a": 1}
```
````
"""


def test_example_returns_the_source_of_the_named_block(tmp_path):
    (tmp_path / "page.md").write_text(PAGE)
    assert example("call-it", root=tmp_path) == 'print("hello")\n'
    assert example("in-a-note", root=tmp_path) == '{"a": 1}\n'  # a note's content is Markdown again


def test_example_fails_on_a_missing_name_and_lists_the_names(tmp_path):
    (tmp_path / "page.md").write_text(PAGE)
    with pytest.raises(
        AssertionError, match=r"No block of docs/ is named 'shown-not-named'.*call-it, in-a-note"
    ):
        example("shown-not-named", root=tmp_path)  # only text of the ````markdown fence


def test_example_fails_on_a_name_used_twice(tmp_path):
    (tmp_path / "page.md").write_text(PAGE)
    (tmp_path / "howto").mkdir()
    (tmp_path / "howto" / "other.md").write_text(PAGE)
    with pytest.raises(
        AssertionError, match=r"'call-it' is used by 2 blocks: .*howto/other.md:3, .*page.md:3"
    ):
        example("call-it", root=tmp_path)


def test_built_pages_and_inventories_are_not_pages(tmp_path):
    for folder in ("_build/html/_sources", "_inventories", "howto"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "page.md").write_text(PAGE)
    assert pages(tmp_path) == [tmp_path / "howto" / "page.md"]


# docs/conftest.py -------------------------------------------------------------------------------------------

# Each page is (file name, text). A page registers, connects and assigns things the next one checks are gone.
HARNESS_PAGES = {
    "a_first.md": """\
# Everything a page may do

```python
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib.auth.models import User

import mcpforms
from mcpforms.conf import conf
from mcpforms.signals import tool_completed


@dataclass
class Point:
    x: int


class NoteForm(forms.Form):
    text = forms.CharField()
    secret = forms.CharField(widget=forms.PasswordInput)  # warned of without BASE_URL, whatever the block


mcpforms.register(NoteForm, name="docs_harness_note")


def heard(sender, **kwargs):
    pass


tool_completed.connect(heard, weak=False)
User.objects.create(username="docs-harness")
settings.DOCS_HARNESS = True
```

% invisible-code-block: python
%
% import pickle
% import sys
%
% assert __name__ == "docs_a_first" and sys.modules[__name__].NoteForm is NoteForm
% assert pickle.loads(pickle.dumps(Point(1))) == Point(1)

```{code-block} python
:name: harness-never-run

raise AssertionError("a named block ran")
```

```{code-block} json
:name: harness-not-parsed

{not json}
```

```json
{"valid": true}
```

% expect-warnings: mcpforms.W001

```python
MCPFORMS = {"NOT_A_KEY": 1}
```

```python
MCPFORMS = {"STATE_MAX_AGE": 60}
```

```python
settings.MCPFORMS = {"PAGE_SIZE": 7}  # no setting_changed: read once conf forgets
conf.forget()
assert conf.PAGE_SIZE == 7
```

````markdown
How a page writes an expectation and an invisible block (only text here, so neither runs):

% expect-warnings: mcpforms.W999

% invisible-code-block: python
%
% raise AssertionError("an example of a block ran")
````
""",
    "b_second.md": """\
# Nothing of the first page is left

```python
from django.conf import settings
from django.contrib.auth.models import User

from mcpforms.conf import DEFAULTS, conf
from mcpforms.protocol.server import default_server
from mcpforms.registry import registry_for
from mcpforms.signals import tool_completed

assert "docs_harness_note" not in registry_for(default_server).tools
assert "docs_a_first" not in {getattr(entry[1], "__module__", None) for entry in tool_completed.receivers}
assert not hasattr(settings, "DOCS_HARNESS")
assert conf.PAGE_SIZE == DEFAULTS["PAGE_SIZE"]  # the restored MCPFORMS was announced
assert not User.objects.filter(username="docs-harness").exists()
assert "Point" not in globals()
```

% invisible-code-block: python
%
% from django.test import override_settings
%
% import mcpforms.oauth
%
% provider = override_settings(OAUTH2_PROVIDER=mcpforms.oauth.settings())
% provider.enable()

```python
ALLOWED_HOSTS = ["forms.example.com"]
MCPFORMS = {"AUTHENTICATION": ["mcpforms.oauth.OAuth2Auth"], "BASE_URL": "https://forms.example.com"}
```

% invisible-code-block: python
%
% provider.disable()
""",
    "c_broken_python.md": "# A\n\n```python\nx = 1\n```\n\n```python\nassert x == 2\n```\n",
    "d_broken_json.md": '# A\n\n```json\n{"trailing": "comma",}\n```\n',
    "e_unknown_key.md": '# A\n\n```python\nMCPFORMS = {"NOT_A_KEY": 1}\n```\n',
    "f_bad_value.md": '# A\n\n```python\nMCPFORMS = {"STATE_MAX_AGE": -1}\n```\n',
    "g_stale_expectation.md": "# A\n\n% expect-warnings: mcpforms.W001\n\n```python\nMCPFORMS = {}\n```\n",
    "h_dangling_expectation.md": "# A\n\n% expect-warnings: mcpforms.W001\n\n```python\nx = 1\n```\n",
    "i_pasted.md": """\
# Blocks pasted into a new project, as a reader pastes them

% invisible-code-block: python
%
% from django.urls import include

```{code-block} python
:caption: urls.py

import mcpforms.api

urlpatterns += [path("mcp", mcpforms.api.urls)]  # path: startproject's urls.py imports it
```

```{code-block} python
:caption: mysite/urls.py

urlpatterns += [path("", include("mcpforms.urls"))]  # include: no invisible block gives it
```

```{code-block} python
:caption: settings.py
:name: harness-pasted-named

INSTALLED_APPS += ["mcpforms"]
ALLOWED_HOSTS = ["forms.example.com"]
MCPFORMS = {"BASE_URL": "https://forms.example.com"}  # its host is in ALLOWED_HOSTS
```

```python
assert INSTALLED_APPS[0] == "django.contrib.admin" and INSTALLED_APPS[-1] == "mcpforms"
assert "BASE_DIR" not in globals()  # what the block did not change stays in the file
```

```{code-block} python
:caption: settings.py

MCPFORMS = {"BASE_URL": "https://elsewhere.example"}  # its host is not
```

```{code-block} python
:caption: settings.py

DEBUG = False  # MCPFORMS unchanged: not checked again
```

```{code-block} python
:caption: greeter/mcp_tools.py

GREETING = "hello"
```

```{code-block} python
:caption: urls.py

from greeter.mcp_tools import GREETING

assert GREETING == "hello"
urlpatterns += [path("mcp", mcpforms.api.urls)]  # twice the same: Django's URL checks let it be
```

```{code-block} python
:caption: urls.py

urlpatterns += ["not a pattern"]
```
""",
    "j_after_pasting.md": """\
# Nothing of the pasted page is left

```python
import sys

assert "greeter.mcp_tools" not in sys.modules and "greeter" not in sys.modules
assert "INSTALLED_APPS" not in globals()
```

```{code-block} python
:caption: settings.py

assert "mcpforms" not in INSTALLED_APPS  # a new project of its own
```
""",
}


# What some test modules do, and the checks of a later page must not see: keep a server of their own alive
# for the rest of the run, here one whose tool needs a scope the OAuth provider does not offer.
LEFTOVER = """\
from django import forms

import mcpforms
from mcpforms.protocol.server import Server


class ScopedForm(forms.Form):
    text = forms.CharField()


leftover = Server(key="leftover")
mcpforms.register(ScopedForm, server=leftover, name="scoped", scope="forms.write")


def test_it_keeps_a_server_alive():
    pass
"""


def at(page: str, text: str, *, opening: bool = True) -> tuple[str, str]:
    """The test id of the example whose first line is ``text``: a block's is its opening line (the fence or
    the comment before the line), a ``% expect-warnings`` comment's is its own."""
    lines = HARNESS_PAGES[f"{page}.md"].splitlines()
    line = lines.index(text) + 1
    if opening:
        line = next(
            number
            for number in range(line - 1, 0, -1)
            if lines[number - 1].startswith(("```", "% invisible"))
        )
    return page, f"line:{line},column:1"


def test_the_harness_runs_pages_to_the_contract(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DOCS / "conftest.py", docs / "conftest.py")
    for name, text in HARNESS_PAGES.items():
        (docs / name).write_text(text)
    (tmp_path / "test_leftover.py").write_text(LEFTOVER)
    (tmp_path / "pytest.ini").write_text("[pytest]\nDJANGO_SETTINGS_MODULE = tests.settings\n")
    report = tmp_path / "report.xml"
    # On SQLite in memory whatever this run's database: on PostgreSQL the inner run would create, then drop,
    # the very test database this run is using (both are "test_" + its name), and every later test fails.
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--nomigrations"]
    run = subprocess.run(
        [*command, f"--junitxml={report}", "test_leftover.py", "docs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes: dict[tuple[str, str], str] = {}  # (page, "line:N,column:1") → "passed", or what failed
    for case in ElementTree.parse(report).iter("testcase"):
        failed = [child.text or "" for child in case if child.tag in ("failure", "error")]
        page = case.get("classname", "").removeprefix("docs.").removesuffix(".md")
        outcomes[page, case.get("name", "")] = failed[0] if failed else "passed"
    assert run.returncode == 1, run.stdout[-3000:]
    expected = {
        at("a_first", "from dataclasses import dataclass"): "passed",
        at("a_first", "% import pickle"): "passed",  # the invisible block
        at("a_first", '{"valid": true}'): "passed",  # and neither of the named blocks
        at("a_first", "% expect-warnings: mcpforms.W001", opening=False): "passed",
        at("a_first", 'MCPFORMS = {"NOT_A_KEY": 1}'): "passed",  # the warning it expects
        at("a_first", 'MCPFORMS = {"STATE_MAX_AGE": 60}'): "passed",
        at(
            "a_first",
            'settings.MCPFORMS = {"PAGE_SIZE": 7}  # no setting_changed: read once conf forgets',
        ): "passed",
        at("b_second", "from django.conf import settings"): "passed",
        at("b_second", "% provider = override_settings(OAUTH2_PROVIDER=mcpforms.oauth.settings())"): "passed",
        at("b_second", 'ALLOWED_HOSTS = ["forms.example.com"]'): "passed",  # not the leftover's W326
        at("b_second", "% provider.disable()"): "passed",
        ("test_leftover", "test_it_keeps_a_server_alive"): "passed",
        at("c_broken_python", "x = 1"): "passed",
        at("c_broken_python", "assert x == 2"): "assert x == 2",
        # After the colon comes json's own message, which Python 3.13 words otherwise.
        at("d_broken_json", '{"trailing": "comma",}'): "This json block does not parse: ",
        at(
            "e_unknown_key", 'MCPFORMS = {"NOT_A_KEY": 1}'
        ): "mcpforms.W001: MCPFORMS has an unknown key 'NOT_A_KEY'.",
        at(
            "f_bad_value", 'MCPFORMS = {"STATE_MAX_AGE": -1}'
        ): "mcpforms.E002: MCPFORMS['STATE_MAX_AGE'] must be",
        at("g_stale_expectation", "% expect-warnings: mcpforms.W001", opening=False): "passed",
        at("g_stale_expectation", "MCPFORMS = {}"): "% expect-warnings named mcpforms.W001, which the checks",
        at("h_dangling_expectation", "% expect-warnings: mcpforms.W001", opening=False): "passed",
        at(
            "h_dangling_expectation", "x = 1"
        ): "% expect-warnings is not followed by a block setting MCPFORMS",
        at("i_pasted", "% from django.urls import include"): "passed",
        at("i_pasted", "import mcpforms.api"): "passed",
        at(
            "i_pasted",
            'urlpatterns += [path("", include("mcpforms.urls"))]  # include: no invisible block gives it',
        ): "fails at its line 1: NameError: name 'include' is not defined",
        at("i_pasted", 'INSTALLED_APPS += ["mcpforms"]'): "passed",  # named, and pasted all the same
        at(
            "i_pasted",
            'assert INSTALLED_APPS[0] == "django.contrib.admin" and INSTALLED_APPS[-1] == "mcpforms"',
        ): "passed",
        at(
            "i_pasted", 'MCPFORMS = {"BASE_URL": "https://elsewhere.example"}  # its host is not'
        ): "mcpforms.E022",
        at("i_pasted", "DEBUG = False  # MCPFORMS unchanged: not checked again"): "passed",
        at("i_pasted", 'GREETING = "hello"'): "passed",
        at("i_pasted", "from greeter.mcp_tools import GREETING"): "passed",
        at("i_pasted", 'urlpatterns += ["not a pattern"]'): "gives URL patterns Django's checks refuse",
        at("j_after_pasting", "import sys"): "passed",
        at(
            "j_after_pasting", 'assert "mcpforms" not in INSTALLED_APPS  # a new project of its own'
        ): "passed",
    }
    assert set(outcomes) == set(expected), {
        "ran but not expected": sorted(set(outcomes) - set(expected)),
        "expected but did not run": sorted(set(expected) - set(outcomes)),
    }
    wrong = {key: outcomes[key] for key, wanted in expected.items() if wanted not in outcomes[key]}
    assert not wrong, wrong
