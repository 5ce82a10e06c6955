"""A new project's ``settings.py`` and ``urls.py``, with a page's blocks pasted at their end, as a reader
pastes them.

docs/conftest.py runs every block captioned with one of these files (``CodeBlock.project_file``) here,
never in the page's namespace: whatever the block needs is in the file ``django-admin startproject``
writes, in the blocks of the page pasted into that file before it, or in the block itself. An invisible
block cannot help it, since a reader does not have one.
"""

from __future__ import annotations

import atexit
import builtins
import copy
import shutil
import tempfile
import traceback
from functools import cache
from pathlib import Path
from typing import Any

from django.core.checks import ERROR
from django.core.checks.urls import check_resolver
from django.core.management import call_command
from django.urls import URLResolver
from django.urls.resolvers import RegexPattern

from tests.docs_examples import PROJECT_FILES

# What `django-admin startproject mysite` names the project's package.
PROJECT = "mysite"


class PasteError(AssertionError):
    """A block that fails where a reader pastes it; the message says what failed, and where."""


@cache
def new_project() -> Path:
    """A project ``django-admin startproject`` made, with this run's Django; removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="docs-new-project-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    call_command("startproject", PROJECT, str(folder), verbosity=0)
    return folder


def pristine(file: str) -> str:
    return (new_project() / PROJECT / file).read_text(encoding="utf-8")


class NewProject:
    """The files of one new project, as one page has pasted into them so far: each file's namespace, as
    Python left it after running the file's lines (startproject's, then each block's, once each)."""

    def __init__(self) -> None:
        self.namespaces = {file: run(file, pristine(file), filename(file)) for file in PROJECT_FILES}

    def paste(self, file: str, block: str, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Run ``block`` (shown at ``where``) at the end of ``file``, after what is there: what the file
        defined before it, and what it defines now. Raise ``PasteError`` if it fails."""
        namespace = self.namespaces[file]
        before = {name: shallow(value) for name, value in namespace.items()}
        pasted = f"<{where}, pasted at the end of {PROJECT}/{file}>"
        try:
            exec(compile(block, pasted, "exec"), namespace)
        except Exception as error:
            raise PasteError(failure(file, error, pasted, where)) from error
        if file == "urls.py":
            problems = url_errors(namespace)
            if problems:
                raise PasteError(
                    f"Pasted at the end of a new project's {file}, {where} gives URL patterns Django's "
                    "checks refuse:\n" + "\n".join(problems)
                )
        return before, namespace


def filename(file: str) -> str:
    return f"<{PROJECT}/{file} of a new project>"


def run(file: str, text: str, name: str) -> dict[str, Any]:
    path = new_project() / PROJECT / file
    namespace: dict[str, Any] = {
        "__file__": str(path),
        "__name__": f"{PROJECT}.{file.removesuffix('.py')}",
        "__builtins__": builtins,
    }
    exec(compile(text, name, "exec"), namespace)
    return namespace


def shallow(value: object) -> object:
    """A copy of ``value`` that a later ``+=`` on the original does not change (a list, a dict)."""
    try:
        return copy.copy(value)
    except Exception:  # modules, functions: compared as they are
        return value


def failure(file: str, error: Exception, pasted: str, where: str) -> str:
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == pasted]
    said = "".join(traceback.format_exception_only(type(error), error)).strip()
    at = f" at its line {lines[-1]}" if lines and lines[-1] is not None else ""
    return f"Pasted at the end of a new project's {file}, {where} fails{at}: {said}"


def url_errors(defined: dict[str, Any]) -> list[str]:
    """What Django's URL checks refuse in the URLconf ``defined`` holds (its ``urlpatterns``)."""
    if "urlpatterns" not in defined:
        return ["urls.py no longer has urlpatterns"]
    resolver = URLResolver(RegexPattern(r"^/"), defined["urlpatterns"])
    return [f"{message.id}: {message.msg}" for message in check_resolver(resolver) if message.level >= ERROR]


def changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The names ``after`` defines that ``before`` did not, or bound to something else."""
    return {
        name: value
        for name, value in after.items()
        if not name.startswith("__") and (name not in before or not same(before[name], value))
    }


def same(one: object, other: object) -> bool:
    try:
        return bool(one is other or one == other)
    except Exception:  # a value whose comparison fails is not the same
        return False
