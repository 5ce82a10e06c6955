"""What mcpforms and each of its dependencies add to a process's resident memory, on import.

Run: ``.venv/bin/python bench/import_cost.py`` (``bench/http_flow.py`` runs it too). Every figure comes
from fresh processes, ``REPEATS`` of each kind, and is a median of ``VmRSS`` differences:

- *with mcpforms*: pydantic, mcp_types, Django set up with the settings of a plain project
  (``bench.http_settings``, less the bench's app: Django's six contrib apps and mcpforms; the WSGI
  handler loaded), ninja, then ``mcpforms.api``, ``mcpforms.urls`` and ``mcpforms.views``: everything a
  worker serving the endpoint and its URL-mode pages has imported;
- *dependencies only*: the same steps without mcpforms, then every other module the first kind ended up
  with that is not mcpforms' own, a step per top-level package (the revision modules of mcp_types, more
  of Django's and ninja's).

Each step's cost is what it adds after the steps before it, in that order. mcpforms' own footprint is the
first kind's total less the second's.
"""

from __future__ import annotations

import importlib
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 5
OWN = ("mcpforms", "bench")


def configure(*, with_mcpforms: bool) -> None:
    """Django's settings: a plain project's, minus the bench's app (and minus mcpforms unless
    ``with_mcpforms``)."""
    from django.conf import settings

    from bench import http_settings

    values = {name: getattr(http_settings, name) for name in dir(http_settings) if name.isupper()}
    apps = [app for app in http_settings.INSTALLED_APPS if not app.startswith("bench")]
    if not with_mcpforms:
        apps.remove("mcpforms")
    databases = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    settings.configure(**{**values, "INSTALLED_APPS": apps, "DATABASES": databases, "DEBUG": False})


def child(kind: str) -> None:
    """Take the steps of ``kind`` (``all`` or ``deps``); print each step's RSS and the modules, as JSON."""
    from bench.procfs import status_kib

    def rss_kib() -> int:
        return status_kib("self", "VmRSS")

    steps: list[tuple[str, int]] = [("python", rss_kib())]
    imported: list[str] = []

    def step(name: str) -> None:
        steps.append((name, rss_kib()))

    import pydantic

    pydantic.BaseModel, pydantic.TypeAdapter  # noqa: B018  (pydantic imports its core lazily)
    step("pydantic")
    import mcp_types  # noqa: F401

    step("mcp_types")
    configure(with_mcpforms=kind == "all")
    import django
    from django.core.wsgi import get_wsgi_application

    django.setup()
    get_wsgi_application()
    step("django (setup, WSGI handler)")
    import ninja  # noqa: F401

    step("ninja")
    if kind == "all":
        for module in ("mcpforms.api", "mcpforms.urls", "mcpforms.views"):
            importlib.import_module(module)
        step("mcpforms")
    else:
        others = [module for module in json.loads(sys.stdin.read()) if not module.startswith(OWN)]
        for package in sorted({module.split(".")[0] for module in others}):
            found = len(imported)
            for module in others:
                if module.split(".")[0] != package or module in sys.modules:
                    continue
                try:
                    importlib.import_module(module)
                except Exception:  # a module that only imports in some setups: not a cost here either
                    continue
                imported.append(module)
            if len(imported) > found:
                step(f"the other modules mcpforms imports: {package}")
    print(json.dumps({"steps": steps, "modules": list(sys.modules), "imported": imported}))


def run_child(kind: str, modules: list[str] | None = None) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", kind]
    stdin = json.dumps(modules or [])
    done = subprocess.run(command, cwd=ROOT, input=stdin, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def deltas(runs: list[dict[str, Any]]) -> tuple[list[tuple[str, float]], float]:
    """The median cost of each step in MiB (the first step: the bare interpreter), and the median total."""
    names = [name for name, _ in runs[0]["steps"]]
    per_step = []
    for index, name in enumerate(names):
        values = [run["steps"][index][1] - (run["steps"][index - 1][1] if index else 0) for run in runs]
        per_step.append((name, statistics.median(values) / 1024))
    total = statistics.median(run["steps"][-1][1] for run in runs) / 1024
    return per_step, total


def main() -> None:
    with_mcpforms = [run_child("all") for _ in range(REPEATS)]
    modules = with_mcpforms[0]["modules"]
    dependencies = [run_child("deps", modules) for _ in range(REPEATS)]
    steps, total_with = deltas(with_mcpforms)
    dependency_steps, total_without = deltas(dependencies)
    print(f"Import costs, RSS in MiB, median of {REPEATS} fresh processes; each step after those above:")
    for name, cost in dependency_steps:
        print(f"  {name:<58} {cost:6.1f}")
    print(f"  {'dependencies, total':<58} {total_without:6.1f}")
    print(f"  {'with mcpforms, total':<58} {total_with:6.1f}")
    own_footprint = total_with - total_without
    print(f"  {'mcpforms own footprint (with mcpforms − dependencies)':<58} {own_footprint:6.1f}")
    counts = Counter(module.split(".")[0] for module in dependencies[0]["imported"])
    print("  modules imported per package: " + ", ".join(f"{name} {count}" for name, count in counts.items()))
    own = sorted(module for module in modules if module.startswith("mcpforms"))
    with_steps = ", ".join(f"{name} {cost:.1f}" for name, cost in steps[3:])
    print(f"  ({len(own)} mcpforms modules; the steps with mcpforms installed: {with_steps})")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main()
