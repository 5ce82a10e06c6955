"""The package's dependency graph: bottom-up layers, no cycle, and a protocol core that knows no forms.

Imports are read from the source with ``ast``, so every kind counts: module level, inside a function, and
under ``if TYPE_CHECKING:``. ARCHITECTURE.md draws the same layers; keep the two in step.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mcpforms"

# Bottom first. A module may import its own layer and the ones below, never one above.
LAYERS: list[tuple[str, set[str]]] = [
    ("settings", {"conf"}),
    ("protocol core", {"protocol"}),
    ("forms", {"fields", "form_factory", "field_rows", "schema", "answers", "output"}),
    ("flow, HTML and storage", {"flow", "ui", "models", "session_stores"}),
    ("tool definition", {"tools", "prompts"}),
    ("serving", {"serving", "url_mode", "signals"}),
    ("registry and sources", {"registry", "definitions"}),
    ("edges", {"", "api", "auth", "oauth", "readiness", "stdio", "views", "urls", "admin", "checks", "apps"}),
]
SKIPPED = {"migrations", "management", "templates", "static"}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
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
            # `from mcpforms import ui` imports the module ui; `from mcpforms.fields import Option` a name
            # of the module fields.
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                named.add(submodule if submodule in known else node.module)
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


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(path, set(found)) - {name} for name, path in found.items()}


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
    edges = graph()
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

    cycles = [cycle for module in sorted(edges) if (cycle := visit(module, []))]
    assert cycles == []


def test_the_walk_sees_imports_of_every_kind(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mcpforms.tools import FormTool\n"
        "def later():\n    from mcpforms import serving\n"
        "import mcpforms.protocol.state\n"
    )
    known = {"mcpforms", "mcpforms.tools", "mcpforms.serving", "mcpforms.protocol", "mcpforms.protocol.state"}
    assert imports(source, known) == {"mcpforms.tools", "mcpforms.serving", "mcpforms.protocol.state"}
