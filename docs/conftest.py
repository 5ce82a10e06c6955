"""The documentation's examples run under pytest-django, each page as one module, in page order.

The contract every page is written to (docs/internals/contributing.md explains it to contributors):

- Every ```` ```python ```` fence, every ``{code-block} python`` directive and every invisible block
  (``% invisible-code-block: python`` and the ``%`` lines after it) runs, in page order, in one namespace
  per page whose ``__name__`` is the page's (``docs_howto_signals``), registered in ``sys.modules`` so
  dataclasses, forms and pickling find their module. A block that opens with ``>>>`` runs as a doctest.
- A python block captioned with a file of a new project (``:caption: settings.py``, ``urls.py``,
  ``mysite/urls.py``) runs as a reader pastes it (``tests.docs_pasting``): at the end of that file as
  ``django-admin startproject`` writes it, after the page's earlier blocks for that file, the whole file
  run as Python imports it, never in the page's namespace, so no invisible block can supply what it
  lacks. A ``urls.py`` must then pass Django's URL checks. What the file defines anew is then copied into
  the page's namespace, for the blocks after it; a ``settings.py`` whose ``MCPFORMS`` changed has it
  checked (below). This holds for a named block too, which an end-to-end test also fetches.
- A python block captioned with an app's module (``:caption: greeter/mcp_tools.py``) runs in the page's
  namespace, which is importable under that name (``from greeter.mcp_tools import server``) until the
  page ends.
- Any other block with a ``:name:`` option never runs: an end-to-end test fetches it
  (``tests.docs_examples``). Neither does a block shown inside another literal block (a
  ````` ````markdown ````` example of one).
- Every unnamed ```` ```json ```` block (fence or directive) must parse with ``json.loads``.
- A python block after which the namespace's ``MCPFORMS`` is a dict, and not the one it held before
  (the block assigned it), has it checked: Django's system checks run under
  ``override_settings(MCPFORMS=...)``, blind to the servers alive before the page began (earlier tests of
  the run keep some), and any error they report that they do not under an empty ``MCPFORMS`` fails the
  block, and so does such a warning of mcpforms' own (``mcpforms.W…``), since an unknown key is only a
  warning (``mcpforms.W001``). The Django settings mcpforms' checks compare ``MCPFORMS`` with
  (``ALLOWED_HOSTS``, ``LOGIN_URL``, ``OAUTH2_PROVIDER``) apply with it when the page set them. A page
  that shows
  a configuration for its warning says so just before the block, ``% expect-warnings: mcpforms.W001``:
  the next checked block must then report exactly those of mcpforms' warnings.
- A page runs in one database transaction, rolled back after its last block, as a ``TestCase`` does:
  ``on_commit`` callbacks never run by themselves, so a block that needs them (mcpforms' signals are
  sent on commit) wraps its calls in ``TestCase.captureOnCommitCallbacks(execute=True)``, invisibly.
- A page leaves nothing behind: the tools and prompts it registered on an existing server are
  unregistered, the signal receivers it connected (its own functions, or functions of modules imported
  before it) are disconnected, the settings it assigned are restored (with ``setting_changed`` sent),
  the mail outbox is emptied and its namespace is cleared.
"""

from __future__ import annotations

import json
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest
from django.conf import UserSettingsHolder, settings
from django.core import checks, mail
from django.db import connections, transaction
from django.dispatch import Signal
from django.test import override_settings
from django.test.signals import setting_changed
from sybil import Document, Example, Region, Sybil
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.parsers.myst.lexers import DirectiveInPercentCommentLexer

from mcpforms.protocol import offering
from mcpforms.protocol.server import Server, default_server, servers
from mcpforms.registry import registries
from tests.docs_examples import CodeBlock, code_blocks, inside, is_page, literal_blocks, unnamed
from tests.docs_pasting import NewProject, PasteError, changed

HERE = Path(__file__).resolve().parent
PYTHON = PythonEvaluator()
DOCTEST = DocTestStringParser(DocTestEvaluator())
EXPECT_WARNINGS = DirectiveInPercentCommentLexer(directive="expect-warnings", arguments=".+")
# What each page expects of its next checked MCPFORMS: the ids, and the line that said so.
_expected: weakref.WeakKeyDictionary[Document, tuple[set[str], int]] = weakref.WeakKeyDictionary()
# The servers alive when each page began, but mcpforms' default one: not the page's, nor the project's.
_foreign: weakref.WeakKeyDictionary[Document, weakref.WeakSet[Server]] = weakref.WeakKeyDictionary()
# Each page's new project, as its blocks captioned settings.py or urls.py have been pasted into it.
_projects: weakref.WeakKeyDictionary[Document, NewProject] = weakref.WeakKeyDictionary()
# The module names each page's namespace is importable under (its blocks' app-module captions), and the
# packages made for them.
_aliases: weakref.WeakKeyDictionary[Document, list[str]] = weakref.WeakKeyDictionary()
# The Django settings mcpforms' checks compare MCPFORMS with, applied with it when a page set them.
BESIDE = ("ALLOWED_HOSTS", "LOGIN_URL", "OAUTH2_PROVIDER")


# Parsers -------------------------------------------------------------------------------------------------


def python_blocks(document: Document) -> Iterator[Region]:
    for block in code_blocks(document):
        if block.language != "python":
            continue
        region = block.region()
        if block.project_file is not None:  # named or not: it is pasted, as a reader does
            region.evaluator = partial(run_pasted, block)
            yield region
        elif block.name is not None:
            continue  # fetched by an end-to-end test
        elif block.source.lstrip().startswith(">>>"):
            for doctest in DOCTEST(block.source, document.path):
                doctest.adjust(region, block.source)
                yield doctest
        else:
            region.evaluator = partial(run_python, module=block.app_module)
            yield region


def json_blocks(document: Document) -> Iterator[Region]:
    for block in unnamed(code_blocks(document), "json"):
        region = block.region()
        region.evaluator = parse_json
        yield region


def expected_warnings(document: Document) -> Iterator[Region]:
    shown = literal_blocks(document)  # where the comment is only an example of one
    for region in EXPECT_WARNINGS(document):
        if inside(region, shown):
            continue
        region.parsed = set(region.lexemes["arguments"].replace(",", " ").split())
        region.evaluator = expect
        yield region


# Evaluators ----------------------------------------------------------------------------------------------


def run_python(example: Example, *, module: str | None = None) -> str | None:
    if module is not None:
        importable_as(example.document, module)
    before = example.namespace.get("MCPFORMS")
    PYTHON(example)
    after = example.namespace.get("MCPFORMS")
    if isinstance(after, dict) and after is not before:
        return check(example, after)
    return None


def run_pasted(block: CodeBlock, example: Example) -> str | None:
    """Paste ``block`` into the page's new project; copy what its file now defines anew into the page's
    namespace, and check ``MCPFORMS`` when a ``settings.py`` block changed it."""
    project = _projects.setdefault(example.document, NewProject())
    assert block.project_file is not None
    try:
        before, after = project.paste(
            block.project_file, str(block.source), f"the block at line {block.line}"
        )
    except PasteError as error:
        return str(error)
    example.namespace.update(changed(before, after))
    value = after.get("MCPFORMS")
    if block.project_file == "settings.py" and isinstance(value, dict) and value != before.get("MCPFORMS"):
        return check(example, value)
    return None


def importable_as(document: Document, dotted: str) -> None:
    """Make the page's namespace importable as ``dotted`` (and its packages) until the page ends."""
    page_module = sys.modules[module_name(Path(document.path))]
    made = _aliases.setdefault(document, [])
    if sys.modules.get(dotted, page_module) is not page_module:
        raise AssertionError(f"The caption names {dotted}, a module that exists: name it otherwise.")
    parts = dotted.split(".")
    for depth in range(1, len(parts)):
        package = ".".join(parts[:depth])
        if package not in sys.modules:
            placeholder = types.ModuleType(package)
            placeholder.__path__ = []
            sys.modules[package] = placeholder
            made.append(package)
    if dotted not in sys.modules:
        sys.modules[dotted] = page_module
        made.append(dotted)


def parse_json(example: Example) -> str | None:
    try:
        json.loads(example.parsed)
    except json.JSONDecodeError as error:
        return f"This json block does not parse: {error}."
    return None


def expect(example: Example) -> None:
    _expected[example.document] = (example.parsed, example.line)


def check(example: Example, value: dict[str, Any]) -> str | None:
    """Django's system checks under ``MCPFORMS = value``: what fails the block, or None.

    Only the project and the page count: the servers alive before the page began (tests that ran earlier
    in the same process keep theirs, on module level) are hidden from the checks, and of the rest only
    what the value brings counts, the messages the checks do not give under an empty ``MCPFORMS``."""
    # The Django settings a page sets beside MCPFORMS, which mcpforms' checks compare it with.
    beside = {name: example.namespace[name] for name in BESIDE if name in example.namespace}
    with hidden(_foreign.get(example.document, weakref.WeakSet())):
        with override_settings(MCPFORMS={}):
            regardless = checks.run_checks()
        with override_settings(MCPFORMS=value, **beside):
            messages = [message for message in checks.run_checks() if message not in regardless]
    expected, _line = _expected.pop(example.document, (set(), 0))
    ours = {message.id for message in messages if is_our_warning(message)}
    failing = [
        message
        for message in messages
        if message.level >= checks.ERROR or (is_our_warning(message) and message.id not in expected)
    ]
    lines = [f"{message.id}: {message.msg} (hint: {message.hint})" for message in failing]
    lines += [
        f"% expect-warnings named {id_}, which the checks did not report" for id_ in sorted(expected - ours)
    ]
    if lines:
        return "The checks of this block's MCPFORMS report:\n" + "\n".join(lines)
    return None


@contextmanager
def hidden(foreign: weakref.WeakSet[Server]) -> Iterator[None]:
    """Hide the ``foreign`` servers from the checks, which find every server through the registers of
    ``mcpforms.protocol.offering``."""
    numbers = {number: server for number, server in list(offering.built.items()) if server in foreign}
    keys = {key: server for key, server in list(offering.by_key.items()) if server in foreign}
    for number in numbers:
        del offering.built[number]
    for key in keys:
        del offering.by_key[key]
    try:
        yield
    finally:
        offering.built.update(numbers)
        offering.by_key.update(keys)


def is_our_warning(message: checks.CheckMessage) -> bool:
    return checks.WARNING <= message.level < checks.ERROR and (message.id or "").startswith("mcpforms.")


collect_page = Sybil(
    parsers=[expected_warnings, python_blocks, json_blocks],
    patterns=["*.md"],
    fixtures=["_docs_page"],
).pytest()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return collect_page(file_path, parent) if is_page(file_path, HERE) else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tell pytest-django the examples use the databases, so it creates them as for a marked test. (Under
    pytest-xdist a page's examples must stay on one worker, in order: ``make check`` runs
    ``--dist loadscope``, whose scope of an example is its page. An ``xdist_group`` mark would not do:
    pytest 9.2 ignores the node ids ``--dist loadgroup`` rewrites, pytest-xdist#1386.)"""
    for item in items:
        if is_page(item.path, HERE):
            item.add_marker(pytest.mark.django_db(databases="__all__"))


# A page as a module ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def _docs_page(
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_setup: None,
    django_db_blocker: Any,
) -> Iterator[None]:
    """Run one page (the module-scoped node is Sybil's file) as a module, in a transaction, and leave no
    trace of it."""
    (document,) = request.node.documents
    with django_db_blocker.unblock(), page(document):
        yield
    if document in _expected:
        _ids, line = _expected.pop(document)
        pytest.fail(f"{document.path}:{line}: % expect-warnings is not followed by a block setting MCPFORMS.")


class PageModule:
    """What ``sys.modules`` holds for a page: an object whose ``__dict__`` is the page's namespace (a
    module's own ``__dict__`` cannot be replaced)."""


def module_name(path: Path) -> str:
    return "docs_" + "_".join(path.relative_to(HERE).with_suffix("").parts).replace("-", "_")


@contextmanager
def page(document: Document) -> Iterator[None]:
    name = module_name(Path(document.path))
    namespace = document.namespace
    namespace["__name__"] = name
    module = PageModule()
    module.__dict__ = namespace
    sys.modules[name] = module  # type: ignore[assignment]
    imported = set(sys.modules)
    signals = receivers()
    tools = {id(registry): (set(registry.tools), set(registry.prompts)) for _server, registry in registries()}
    _foreign[document] = weakref.WeakSet(server for server in servers() if server is not default_server)
    holder = override_settings()
    holder.enable()
    mail.outbox = []
    try:
        with ExitStack() as atomics:
            for alias in connections:
                atomics.enter_context(transaction.atomic(using=alias))
            try:
                yield
            finally:
                for alias in connections:
                    transaction.set_rollback(True, using=alias)
    finally:
        for _server, registry in registries():
            names, prompts = tools.get(id(registry), (set(), set()))
            for new in (set(registry.tools) - names) | (set(registry.prompts) - prompts):
                registry.unregister(new)
        disconnect(signals, lambda module: module == name or module in imported)
        restore(holder)
        mail.outbox = []
        del sys.modules[name]
        for alias in _aliases.pop(document, []):
            sys.modules.pop(alias, None)
        _foreign.pop(document, None)
        _projects.pop(document, None)
        namespace.clear()


def all_signals() -> Iterable[Signal]:
    """Every signal a loaded module holds: receivers may be connected to any of them."""
    found: dict[int, Signal] = {}
    for loaded in list(sys.modules.values()):
        for value in list(getattr(loaded, "__dict__", {}).values()):
            if issubclass(type(value), Signal):  # type(): never wake a lazy object up
                found[id(value)] = value
    return found.values()


def receivers() -> dict[int, set[object]]:
    """The lookup keys of every signal's receivers, by signal."""
    return {id(signal): {entry[0] for entry in signal.receivers} for signal in all_signals()}


def disconnect(before: dict[int, set[object]], ours: Callable[[str | None], bool]) -> None:
    """Disconnect each receiver connected since ``before`` whose function's module is ``ours``: the page's
    own, or one imported before the page (so the page connected it). A module first imported by the page
    connected its receivers at import, as it would in any process: they stay."""
    for signal in all_signals():
        known = before.get(id(signal), set())
        with signal.lock:
            kept = [
                entry
                for entry in signal.receivers
                if entry[0] in known or not ours(receiver_module(entry[1]))
            ]
            if len(kept) != len(signal.receivers):
                signal.receivers = kept
                signal.sender_receivers_cache.clear()


def receiver_module(receiver: object) -> str | None:
    if isinstance(receiver, weakref.ReferenceType):  # weak receivers (the default), WeakMethod included
        receiver = receiver()
    module = getattr(receiver, "__module__", None)
    return module if isinstance(module, str) else None


def restore(holder: override_settings) -> None:
    """Put back the settings the page started with, and send ``setting_changed`` for each one the page
    assigned (``settings.X = ...``), so the caches that listen (mcpforms' settings) forget its values."""
    changed: set[str] = set()
    current: object = cast(Any, settings)._wrapped  # the page's holder, and any a block left enabled above it
    before: object = holder.wrapped
    while isinstance(current, UserSettingsHolder) and current is not before:
        changed |= {key for key in vars(current) if key.isupper()} | current._deleted
        current = current.default_settings
    holder.disable()
    for key in sorted(changed):
        setting_changed.send(
            sender=type(cast(Any, settings)._wrapped),
            setting=key,
            value=getattr(settings, key, None),
            enter=False,
        )
