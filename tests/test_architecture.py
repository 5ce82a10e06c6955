"""The package's dependency graph: bottom-up layers, no cycle, and a protocol core that knows no forms.

Imports are read from the source with ``ast``, so every kind counts: module level, inside a function, and
under ``if TYPE_CHECKING:``. An import that names a package (``from mcpforms.protocol import results``) goes
through its ``__init__``, and so depends on everything that ``__init__`` imports. ARCHITECTURE.md draws the
same layers; keep the two in step.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mcpforms"

# Bottom first. A module may import its own layer and the ones below, never one above.
LAYERS: list[tuple[str, set[str]]] = [
    ("settings", {"conf"}),
    ("protocol core", {"protocol"}),
    (
        "forms",
        {
            "fields",
            "form_factory",
            "field_rows",
            "definition_steps",
            "schema",
            "answers",
            "verdicts",
            "output",
        },
    ),
    ("flow, HTML and storage", {"flow", "ui", "sealing", "models", "session_stores", "task_store"}),
    ("tool definition", {"tool_checks", "tools", "prompts"}),
    (
        "serving",
        {
            "serving",
            "running",
            "form_tasks",
            "approvals",
            "ways",
            "url_mode",
            "signals",
            "wizards",
            "wizard_rounds",
            "wizard_formsets",
            "wizard_pages",
            "wizard_kept",
            "wizard_app",
            "wizard_views",
        },
    ),
    ("registry and sources", {"registry", "definitions"}),
    (
        "edges",
        {
            "",
            "api",
            "mounts",
            "discovery",
            "auth",
            "oauth",
            "readiness",
            "stdio",
            "stdio_connection",
            "views",
            "urls",
            "admin",
            "task_admin",
            "checks",
            "apps",
        },
    ),
]
SKIPPED = {"migrations", "management", "templates", "static"}


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        relative = path.relative_to(package.parent).with_suffix("")
        if SKIPPED & set(relative.parts):
            continue
        name = ".".join(relative.parts).removesuffix(".__init__")
        found[name] = path
    return found


def imports(path: Path, known: set[str]) -> set[str]:
    """The mcpforms modules ``path`` imports, wherever the import statement stands."""
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from mcpforms.fields import Option` imports a name of the module fields. `from mcpforms import
            # ui` imports the module ui, and reads it off the package first: an edge to the package too,
            # so to everything its `__init__` imports, for a cycle through an `__init__` is still a cycle.
            named.add(node.module)
            named |= {f"{node.module}.{alias.name}" for alias in node.names} & known
    found = set()
    for name in named:
        while name and name not in known:  # `import django` and friends fall away here
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def layer_of(module: str) -> int:
    top = module.removeprefix("mcpforms").removeprefix(".").split(".")[0]
    for index, (_, members) in enumerate(LAYERS):
        if top in members:
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and to ARCHITECTURE.md")


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    found = modules(package)
    return {name: imports(path, set(found)) - {name} for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each module that is on one, as the path that returns to it."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for target in sorted(edges[module]):
            if cycle := visit(target, [*path, module]):
                return cycle
        done.add(module)
        return None

    return [cycle for module in sorted(edges) if (cycle := visit(module, []))]


def test_every_import_points_down_or_sideways():
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, targets in graph().items()
        for target in targets
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_the_protocol_core_imports_nothing_of_mcpforms_but_the_settings():
    outside = {
        f"{module} imports {target}"
        for module, targets in graph().items()
        if module.startswith("mcpforms.protocol")
        for target in targets
        if not target.startswith("mcpforms.protocol") and target != "mcpforms.conf"
    }
    assert outside == set()


def test_there_is_no_import_cycle():
    assert cycles(graph()) == []


def test_the_walk_sees_imports_of_every_kind(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mcpforms.tools import FormTool\n"
        "def later():\n    from mcpforms import serving\n"
        "import mcpforms.protocol.state\n"
    )
    known = {"mcpforms", "mcpforms.tools", "mcpforms.serving", "mcpforms.protocol", "mcpforms.protocol.state"}
    # `from mcpforms import serving` reads serving off the package: an edge to the package's __init__ too.
    assert imports(source, known) == {
        "mcpforms",
        "mcpforms.tools",
        "mcpforms.serving",
        "mcpforms.protocol.state",
    }


def test_a_cycle_through_a_package_init_is_a_cycle(tmp_path):
    # The shape mcpforms.protocol once had: its __init__ re-exports server, server imports dispatch, and
    # dispatch imported a sibling through the package, so back into the __init__.
    package = tmp_path / "core"
    package.mkdir()
    (package / "__init__.py").write_text("from core.server import Server\n")
    (package / "server.py").write_text("from core.dispatch import handle\n")
    (package / "dispatch.py").write_text("from core import results\n")
    (package / "results.py").write_text("")
    assert cycles(graph(package)) == [
        ["core", "core.server", "core.dispatch", "core"],
        ["core.dispatch", "core", "core.server", "core.dispatch"],
        ["core.server", "core.dispatch", "core", "core.server"],
    ]
    (package / "dispatch.py").write_text("from core.results import complete\n")
    assert cycles(graph(package)) == []


def test_architecture_md_draws_the_same_layers():
    # The map people read and the rule this module enforces are one table: a module added to one only
    # would make the map wrong.
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text()
    drawn = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`"):
            names = {name.strip().strip("`").rstrip("/") for name in cells[1].split(",")}
            drawn.append(names - {"__init__"})
    assert drawn == [members - {""} for _, members in LAYERS]
