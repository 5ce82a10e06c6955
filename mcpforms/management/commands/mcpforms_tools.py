"""Every tool of the default server: where it comes from, how a client may have it filled, its schemas.

``manage.py mcpforms_tools`` lists them; ``manage.py mcpforms_tools NAME`` shows one in full (its
``inputSchema`` and the elicitation schema derived from its form; a wizard's steps, when each is asked, and
each step's fields and schema); ``--json`` prints the same as JSON on standard output, and nothing else
there. A form that fails to convert is reported in its entry.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from mcpforms.conf import conf
from mcpforms.definitions import DefinitionTool, definition_tools, left_out_definitions
from mcpforms.fields import AutoFormField
from mcpforms.mounts import endpoint_paths
from mcpforms.protocol.catalog import Deferred
from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.primitives import Tool
from mcpforms.protocol.server import default_server
from mcpforms.registry import Registry, registry_for
from mcpforms.schema import form_schema
from mcpforms.tools import FormTool
from mcpforms.ui import submit_name
from mcpforms.ways import page_steps, ways_to_fill
from mcpforms.wizard_views import ViewWizardTool
from mcpforms.wizards import WizardTool

# The command's names for the ways (``flow.Way``), and what they stand for.
PATHS = {"app": "ui", "form": "form", "url": "url"}
PATH_NAMES = {"ui": "MCP Apps UI", "form": "form elicitation", "url": "URL-mode page"}
# What the endpoint does with a tool that cannot be built: what a client sees of it, in words.
NOT_SERVED = "not served (left out of tools/list; a call of it answers -32603 until it is fixed)"


def dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def anonymous_may_use(tool: FormTool) -> bool:
    """Whether an anonymous caller sees and may call the tool (``ALLOW_ANONYMOUS``, then its permission)."""
    return bool(conf.ALLOW_ANONYMOUS) and tool.may_use(
        RequestContext.for_tool(tool.name, user=AnonymousUser())
    )


def code_source(tool: FormTool) -> dict[str, Any]:
    # register(Form, ...) builds its FormTool subclasses inside mcpforms: the class worth naming is the
    # first one the project wrote, if any.
    written = next(
        (
            cls
            for cls in type(tool).__mro__
            if issubclass(cls, FormTool) and not cls.__module__.startswith("mcpforms.")
        ),
        None,
    )
    source = {
        "kind": "code",
        "class": dotted(written) if written is not None else None,
        "form": dotted(tool.form_class),
        "handler": "own" if tool.has_own_handler else "default",
    }
    if isinstance(tool, WizardTool):  # its form is its first step's; its handler takes every step's form
        handle = type(tool).handle
        source["handler"] = {WizardTool.handle: "default", ViewWizardTool.handle: "view"}.get(handle, "own")
    if isinstance(tool, ViewWizardTool):
        source["view"] = dotted(tool.view_class)  # register_wizard's: the formtools view it adapts
        if source["handler"] == "view" and callable(getattr(tool.view_class, "handle", None)):
            source["handler"] = "own"  # the view's handle(request, form_list, form_dict) wins over done()
    return source


def field_entry(auto: AutoFormField) -> dict[str, Any]:
    return {
        "name": auto.name,
        "label": auto.label,
        "type": auto.type,
        "required": auto.required,
        "choices": [option.value for option in auto.options],
        "multiple": auto.multiple,
    }


def wizard_steps(tool: WizardTool) -> list[dict[str, Any]]:
    """A wizard's steps in order: each one's title, when it is asked (``condition`` None: always), whether the
    user answers it even when the arguments fill it (``always_ask``), its fields and the requestedSchema of
    the round that asks all of them."""
    steps = []
    for step in tool.steps:
        fields = tool.step_fields(None, step)
        steps.append(
            {
                "name": step,
                "title": tool.get_step_title(step),
                "condition": tool.describe_condition(step),
                "always_ask": step in tool.always_ask,
                "on_page": step in page_steps(tool),
                "fields": [field_entry(auto) for auto in fields],
                "elicitation_schema": form_schema(fields),
            }
        )
    return steps


def describe(tool: FormTool, source: dict[str, Any]) -> dict[str, Any]:
    """One form tool as the command reports it; ``error`` says why its form cannot be offered. A wizard's
    entry has ``steps`` too."""
    entry: dict[str, Any] = {
        "name": tool.name,
        "title": tool.get_title(),
        "description": tool.get_description(),
        "source": source,
        "ask": tool.ask,
        "path": tool.path,
        "update": tool.update,
        "permission": None,
        "anonymous": False,
        "paths": [],
        "runs": runs_text(tool),
        "submit_tool": None,
        "fields": [],
        "url_page_fields": [],
        "page_only_fields": [],
        "input_schema": None,
        "elicitation_schema": None,
        "error": None,
    }
    if isinstance(tool, WizardTool):
        entry["steps"] = []
    # A tool whose options fail their checks is never served (manage.py check names the problem).
    if refused := [message for message in tool.check() if message.is_serious()]:
        entry["error"] = " ".join(f"{message.id}: {message.msg}" for message in refused)
        return entry
    try:
        entry["permission"] = tool.required_permission()
        entry["anonymous"] = anonymous_may_use(tool)
        fields = tool.fields_for(None)
        entry["input_schema"] = tool.input_schema
        entry["elicitation_schema"] = form_schema(fields)
        entry["paths"] = [PATHS[way] for way in ways_to_fill(tool)]
        entry["submit_tool"] = submit_name(tool.name) if tool.uses_app else None
        if isinstance(tool, WizardTool):
            entry["steps"] = wizard_steps(tool)
    except Exception as error:  # a broken form is what this command is for: report it, never a traceback
        entry["error"] = f"{type(error).__name__}: {error}"
        return entry
    entry["fields"] = [field_entry(auto) for auto in fields]
    # The page shows the whole form, prefilled; page-only fields are the ones nothing else may collect. A
    # wizard's page shows one step: the fields of the steps some client fills there.
    entry["url_page_fields"] = [auto.name for auto in fields] if "url" in entry["paths"] else []
    if isinstance(tool, WizardTool) and entry["url_page_fields"]:
        on_page = page_steps(tool)
        entry["url_page_fields"] = [auto.name for step in on_page for auto in tool.step_fields(None, step)]
    entry["page_only_fields"] = [auto.name for auto in fields if auto.page_only]
    return entry


def _built(slot: Deferred[Tool]) -> Tool | None:
    try:
        return slot.get()
    except Exception:  # its entry says why (describe); the live endpoint logs it and leaves it out
        return None


def admin_source(definition_id: int, version: int, *, enabled: bool = True) -> dict[str, Any]:
    return {"kind": "admin", "definition": definition_id, "version": version, "enabled": enabled}


def source_of(tool: FormTool) -> dict[str, Any]:
    """Where a tool of one of the registry's sources comes from."""
    if isinstance(tool, DefinitionTool):
        return admin_source(tool.definition_id, int(tool.version or 0))
    return {"kind": "source", "class": dotted(type(tool))}


def from_sources(registry: Registry, problems: list[str]) -> tuple[list[FormTool], list[dict[str, Any]]]:
    """The tools the registry's sources serve, and those it leaves out with the reason it gives."""
    served: list[FormTool] = []
    not_served: list[dict[str, Any]] = []
    for source in registry.sources:
        admin = source is definition_tools
        try:
            offered = registry.tools_of(source)
            left_out = left_out_definitions() if admin else []
        except DatabaseError as error:
            what = "Admin-defined forms" if admin else f"The tools of {source.__qualname__}"
            problems.append(f"{what} could not be read ({error}); run manage.py migrate.")
            continue
        for tool, reason in offered:
            if reason:
                not_served.append({"name": tool.name, "source": source_of(tool), "reason": reason})
            else:
                served.append(tool)
        for definition, reason in left_out:
            source_entry = admin_source(definition.pk, definition.version, enabled=definition.enabled)
            not_served.append({"name": definition.name, "source": source_entry, "reason": reason})
    return served, sorted(not_served, key=lambda entry: entry["name"])


def collect() -> dict[str, Any]:
    """Everything the default server offers, and what it leaves out and why, as its registry says."""
    registry = registry_for(default_server)
    problems: list[str] = []
    served, not_served = from_sources(registry, problems)
    tools = [describe(tool, code_source(tool)) for tool in registry.tools.values()]
    tools += [describe(tool, source_of(tool)) for tool in served]
    known = {entry["name"] for entry in tools} | {entry["name"] for entry in not_served}
    known |= {entry["submit_tool"] for entry in tools if entry["submit_tool"]}
    other_tools: list[dict[str, Any]] = []
    # As tools/list builds them: one that cannot be built is left out of the list, not the list broken.
    listed = [tool for slot in default_server.tools.slots() if (tool := _built(slot)) is not None]
    for tool in listed:
        if tool.name not in known:
            other_tools.append({"name": tool.name, "title": tool.title, "description": tool.description})
    prompts = [
        {"name": prompt.name, "title": prompt.title, "form": dotted(prompt.form_class)}
        for prompt in registry.prompts.values()
    ]
    tools.sort(key=lambda entry: entry["name"])
    return {
        "endpoints": endpoint_paths(),
        "allow_anonymous": conf.ALLOW_ANONYMOUS,
        "tools": tools,
        "other_tools": other_tools,
        "prompts": sorted(prompts, key=lambda entry: entry["name"]),
        "not_served": not_served,
        "problems": problems,
    }


def source_text(source: dict[str, Any]) -> str:
    if source["kind"] == "admin":
        state = "" if source["enabled"] else ", disabled"
        return f"admin #{source['definition']} v{source['version']}{state}"
    if source["kind"] == "source":
        return f"source {source['class']}"
    return f"code class {source['class']}" if source["class"] else f"code form {source['form']}"


def runs_text(tool: FormTool) -> str:
    """When the handler runs, whichever path filled the form: what an approval or background work adds."""
    if tool.approval is not None:
        who = (
            f"holders of {tool.approval}"
            if isinstance(tool.approval, str)
            else "its approval rule's approvers"
        )
        return f"once staff approve the request ({who}); every path, the URL-mode page too, makes the request"
    if tool.background:
        return "on a worker for clients that follow tasks; in the request for others and on the URL-mode page"
    return "in the request that completes the form"


def paths_text(entry: dict[str, Any], *, long: bool = False) -> str:
    if entry["error"]:
        return "error"
    if not entry["paths"]:
        return "none (plain tool)" if long else "-"
    if not long:
        return ", ".join(entry["paths"])
    names = [PATH_NAMES[path] for path in entry["paths"]]
    if entry["submit_tool"]:
        names[0] += f" (submit tool {entry['submit_tool']})"
    return ", ".join(names)


def field_kind(field: dict[str, Any]) -> str:
    if field["multiple"]:
        return f"multi-select of {field['type']}"
    return f"select of {field['type']}" if field["choices"] else str(field["type"])


def fields_text(fields: list[dict[str, Any]]) -> str:
    required = {True: ", required", False: ""}
    listed = [f"{field['name']} ({field_kind(field)}{required[field['required']]})" for field in fields]
    return ", ".join(listed) or "none"


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


class Command(BaseCommand):
    help = (
        "List every tool of the default MCP server: where it comes from (code or admin), its ask mode, "
        "permission, anonymous access and the ways it is filled; with NAME, its schemas in full."
    )

    # A form that fails to convert is an error of the system checks (mcpforms.E101): this command must still
    # run to say which and why.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", nargs="?", help="A tool or prompt to show in full.")
        parser.add_argument("--json", action="store_true", help="Print JSON on standard output.")

    def handle(self, *args: Any, name: str | None = None, **options: Any) -> None:
        report = collect()
        for problem in report["problems"]:
            self.stderr.write(problem)
        if name is None:
            if options["json"]:
                self._json(report)
            else:
                self._list(report)
            return
        kind, entry = self._find(report, name)
        if options["json"]:
            self._json({"kind": kind, **entry})
        elif kind == "tool":
            self._detail(entry)
        else:
            self._brief(kind, entry)

    def _json(self, value: Any) -> None:
        self.stdout.write(json.dumps(value, indent=2, default=str))

    def _find(self, report: dict[str, Any], name: str) -> tuple[str, dict[str, Any]]:
        for entry in report["tools"]:
            if name in (entry["name"], entry["submit_tool"]):
                return "tool", entry
        for kind, key in (("prompt", "prompts"), ("not served", "not_served"), ("other tool", "other_tools")):
            for entry in report[key]:
                if entry["name"] == name:
                    return kind, entry
        names = sorted(
            entry["name"]
            for key in ("tools", "prompts", "not_served", "other_tools")
            for entry in report[key]
        )
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"Did you mean {' or '.join(close)}?" if close else f"Known: {', '.join(names) or 'none'}."
        raise CommandError(f"No tool or prompt named {name!r}. {hint}")

    def _list(self, report: dict[str, Any]) -> None:
        tools = report["tools"]
        if report["endpoints"]:
            self.stdout.write(f"Served at {', '.join(report['endpoints'])}")
        else:
            self.stdout.write(
                self.style.WARNING(
                    "Not served: no MCP endpoint is in the URLconf, so clients get 404 Not Found. Add "
                    'path("mcp", mcpforms.api.urls) to urls.py (mcpforms.W005).'
                )
            )
        self.stdout.write(f"{len(tools)} form tool(s); ALLOW_ANONYMOUS = {report['allow_anonymous']!r}\n")
        if tools:
            rows = [["NAME", "SOURCE", "ASK", "PERMISSION", "PATHS", "ANONYMOUS"]]
            rows += [
                [
                    entry["name"],
                    source_text(entry["source"]),
                    entry["ask"],
                    entry["permission"] or "-",
                    paths_text(entry),
                    "yes" if entry["anonymous"] else "no",
                ]
                for entry in tools
            ]
            self.stdout.write("\n".join(table(rows)))
            self.stdout.write("\nPATHS: ui = MCP Apps UI, form = form elicitation, url = URL-mode page")
        for entry in tools:
            if entry["error"]:
                self.stdout.write(self.style.ERROR(f"{entry['name']}: {NOT_SERVED}: {entry['error']}"))
        if report["other_tools"]:
            self.stdout.write("\nOther tools (hand-written, not forms):")
            for entry in report["other_tools"]:
                self.stdout.write(f"  {entry['name']}")
        if report["prompts"]:
            self.stdout.write("\nPrompts (not tools):")
            for entry in report["prompts"]:
                self.stdout.write(f"  {entry['name']}  form {entry['form']}")
        if report["not_served"]:
            self.stdout.write("\nAdmin-defined forms not served:")
            for entry in report["not_served"]:
                self.stdout.write(f"  {entry['name']}  {source_text(entry['source'])}: {entry['reason']}")
        self.stdout.write("\nShow one in full: manage.py mcpforms_tools NAME [--json]")

    def _detail(self, entry: dict[str, Any]) -> None:
        self.stdout.write(f"{entry['name']} — {entry['title']}\n{entry['description']}\n\n")
        source = entry["source"]
        if source["kind"] == "code" and "steps" in entry:
            view = source.get("view")
            made = f"formtools view {view}" if view else f"wizard class {source['class']}"
            handler = "the view's done()" if source["handler"] == "view" else f"{source['handler']} handler"
            origin = f"code: {made}, {handler}"
        elif source["kind"] == "code":
            origin = f"code: form {source['form']}" + (
                f", class {source['class']}" if source["class"] else ""
            )
            origin += f", {source['handler']} handler"
        else:
            origin = source_text(source)
        lines = [
            ("source", origin),
            ("ask", entry["ask"]),
            ("path option", entry["path"] + (", updates an object" if entry["update"] else "")),
            ("permission", entry["permission"] or "none"),
            ("anonymous", "yes" if entry["anonymous"] else "no"),
            ("paths", paths_text(entry, long=True)),
            ("runs", entry["runs"]),
        ]
        if entry["error"]:
            lines.append(("error", entry["error"]))
        else:
            page = "not used"
            if entry["url_page_fields"] and "steps" in entry:
                shown = [step["name"] for step in entry["steps"] if step["on_page"]]
                page = f"step {', '.join(shown)}: " + ", ".join(entry["url_page_fields"])
            elif entry["url_page_fields"]:
                page = "the whole form: " + ", ".join(entry["url_page_fields"])
            if entry["page_only_fields"]:
                page += f" (only there: {', '.join(entry['page_only_fields'])})"
            lines.append(("URL page", page))
            lines.append(("fields", fields_text(entry["fields"])))
        width = max(len(label) for label, _ in lines)
        self.stdout.write("\n".join(f"{label.ljust(width)}  {value}" for label, value in lines))
        if entry["error"]:
            return
        steps = entry.get("steps")
        if steps:
            self._steps(steps)
        self.stdout.write("\ninputSchema (what the model may pass):")
        self.stdout.write(json.dumps(entry["input_schema"], indent=2, default=str))
        if steps:
            for step in steps:
                self.stdout.write(f"\nElicitation schema of step {step['name']} (a round asking all of it):")
                self.stdout.write(json.dumps(step["elicitation_schema"], indent=2, default=str))
            return
        self.stdout.write("\nElicitation schema (requestedSchema of a form elicitation asking every field):")
        self.stdout.write(json.dumps(entry["elicitation_schema"], indent=2, default=str))

    def _steps(self, steps: list[dict[str, Any]]) -> None:
        """A wizard's steps, in the order a call walks them, each with when it is asked (the wizard's
        ``describe_condition``) and its fields."""
        self.stdout.write("\nSteps, one per round (a step whose condition is false is skipped):")
        for number, step in enumerate(steps, start=1):
            when = step["condition"] or "always"
            if step["always_ask"]:
                when += ", answered by the user even when the arguments fill it"
            self.stdout.write(f"  {number}. {step['name']} — {step['title']} — {when}")
            self.stdout.write(f"     fields: {fields_text(step['fields'])}")

    def _brief(self, kind: str, entry: dict[str, Any]) -> None:
        if kind == "prompt":
            self.stdout.write(f"{entry['name']} — prompt (not a tool) of form {entry['form']}")
        elif kind == "not served":
            self.stdout.write(
                f"{entry['name']} — not served ({source_text(entry['source'])}): {entry['reason']}"
            )
        else:
            self.stdout.write(f"{entry['name']} — a hand-written tool, not a form: {entry['description']}")
