"""The code blocks of the documentation's pages, read once, one way: with Sybil's MyST lexers, as MyST reads
them. docs/conftest.py runs the unnamed ones (``code_blocks``); an end-to-end test fetches a named one
(``:name:`` on a ``{code-block}`` directive) with ``example(name)``.

A block's ``:caption:`` says where a reader puts it. One captioned with a file that
``django-admin startproject`` writes (``settings.py``, ``urls.py``, or ``mysite/urls.py``) is aimed at a
project: docs/conftest.py pastes it at the end of that file of a new project (``project_file``). One
captioned with an app's module (``contact/mcp_tools.py``) is that module (``app_module``).

A block counts where the page shows it as code or prose around it: a fence nested in another literal
block (a ````` ````markdown ````` fence that shows how to write a block, a ``{code-block}`` directive) is
only text of the outer one, so it is neither run nor named. A fence inside a directive whose content is
Markdown (``{note}``, ``{tip}``) is a block of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Lexeme, Region
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, RawFencedCodeBlockLexer
from sybil.parsers.myst.lexers import DirectiveInPercentCommentLexer, DirectiveLexer

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# Sphinx's output and the inventories' notes are not pages.
NOT_PAGES = ("_build", "_inventories")

# Every fence, whatever its info string: which of them are code is decided below, from the info string.
_FENCES = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE))
# The directives whose content is code (MyST's names for Sphinx's code-block), with their options.
CODE_DIRECTIVES = ("code-block", "sourcecode", "code")
_DIRECTIVES = DirectiveLexer(directive="|".join(CODE_DIRECTIVES), arguments=".*")
# Blocks run but not shown: `% invisible-code-block: python` (or the HTML comment form) and the lines after.
_INVISIBLE = (
    DirectiveInPercentCommentLexer(directive=r"invisible-code(-block)?", arguments=".+"),
    DirectiveInHTMLCommentLexer(directive=r"invisible-code(-block)?", arguments=".+"),
)


# The files of a new project (`django-admin startproject mysite`, in mysite/) a block may be pasted into.
PROJECT_FILES = ("settings.py", "urls.py")


@dataclass(frozen=True)
class CodeBlock:
    """One block of code of a page: its language, its ``:name:`` (None when unnamed) and its text."""

    path: Path
    line: int  # of its opening fence (or comment), 1-based
    start: int
    end: int
    language: str
    name: str | None
    source: Lexeme
    invisible: bool = False
    caption: str | None = None

    def region(self) -> Region:
        """The block as a Sybil region, for a parser to give an evaluator."""
        return Region(self.start, self.end, parsed=self.source)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def project_file(self) -> str | None:
        """The file of a new project this block is pasted at the end of (``settings.py``, ``urls.py``):
        its caption's, when that names one (``mysite/settings.py`` too), else None."""
        if self.caption is None:
            return None
        parts = self.caption.strip().split("/")
        return parts[-1] if parts[-1] in PROJECT_FILES and len(parts) <= 2 else None

    @property
    def app_module(self) -> str | None:
        """The dotted name of the app module this block is (``contact.mcp_tools`` for a caption
        ``contact/mcp_tools.py``), or None: a script (``client.py``) or a project file is none."""
        if self.caption is None or self.project_file is not None:
            return None
        parts = self.caption.strip().removesuffix(".py").split("/")
        if len(parts) < 2 or not self.caption.strip().endswith(".py"):
            return None
        return ".".join(parts) if all(part.isidentifier() for part in parts) else None


def _literal(info: str) -> bool:
    """Whether a fence with this info string shows its content as text: any fence but a directive whose
    content is Markdown again (``{note}``, ``{admonition}``, ``{tab-item}``)."""
    directive = re.match(r"\{([\w:-]+)\}", info)
    return directive is None or directive[1] in (*CODE_DIRECTIVES, "literalinclude", "eval-rst")


def _source(document: Document, region: Region, lexeme: Lexeme) -> Lexeme:
    """``lexeme`` with ``line_offset`` counted from the region's first line to the source's, options
    included (Sybil's directive lexer counts from the line after the fence), so tracebacks point at the
    page's lines."""
    begins = region.start + lexeme.offset
    return Lexeme(
        str(lexeme), offset=lexeme.offset, line_offset=document.text.count("\n", region.start, begins) - 1
    )


def literal_blocks(document: Document, fences: list[Region] | None = None) -> list[Region]:
    """The fences of ``document`` (or those of its ``fences`` already lexed) whose content is shown as
    text (code, or a ````markdown example)."""
    if fences is None:
        fences = list(_FENCES(document))
    return [fence for fence in fences if _literal(fence.lexemes["info"].strip())]


def inside(region: Region, outers: list[Region]) -> bool:
    """Whether ``region`` lies within one of ``outers`` (and is not that one itself)."""
    return any(
        outer.start <= region.start
        and region.end <= outer.end
        and (outer.start, outer.end) != (region.start, region.end)
        for outer in outers
    )


def code_blocks(document: Document) -> list[CodeBlock]:
    """The blocks of code of ``document`` in page order: fences with a language, code-block directives
    (their ``:name:`` option read) and invisible blocks, except those nested in another literal block."""
    path = Path(document.path)
    fences = list(_FENCES(document))
    literal = literal_blocks(document, fences)
    directives = {region.start: region for region in _DIRECTIVES(document)}

    def block(
        region: Region,
        language: str,
        name: str | None,
        lexeme: Lexeme,
        invisible: bool = False,
        caption: str | None = None,
    ) -> CodeBlock:
        line = document.text.count("\n", 0, region.start) + 1
        source = _source(document, region, lexeme)
        return CodeBlock(path, line, region.start, region.end, language, name, source, invisible, caption)

    blocks: list[CodeBlock] = []
    for fence in fences:
        if inside(fence, literal):
            continue
        info = fence.lexemes["info"].strip()
        if info.startswith("{"):
            directive = directives.get(fence.start)
            if directive is None:  # another directive ({note}, {toctree}): not code
                continue
            language = directive.lexemes["arguments"].strip()
            options = directive.lexemes["options"]
            caption = options.get("caption")
            source = directive.lexemes["source"]
            blocks.append(block(fence, language, options.get("name"), source, caption=caption))
        elif info:
            blocks.append(block(fence, info.split()[0], None, fence.lexemes["source"]))
    for lexer in _INVISIBLE:
        for region in lexer(document):
            if not inside(region, literal):
                language = (region.lexemes.get("arguments") or "").strip()
                blocks.append(block(region, language, None, region.lexemes["source"], invisible=True))
    return sorted(blocks, key=lambda block: block.start)


def is_page(path: Path, root: Path = DOCS) -> bool:
    """Whether ``path`` is a page of the site under ``root``."""
    if path.suffix != ".md" or not path.is_relative_to(root):
        return False
    return not set(NOT_PAGES) & set(path.relative_to(root).parts)


def pages(root: Path = DOCS) -> list[Path]:
    """Every page of the site, in path order."""
    return sorted(path for path in root.rglob("*.md") if is_page(path, root))


def read(path: Path) -> Document:
    return Document(path.read_text(encoding="utf-8"), str(path))


def named_blocks(root: Path = DOCS) -> dict[str, list[CodeBlock]]:
    """Every named block of the site, by name (a name used twice lists both)."""
    found: dict[str, list[CodeBlock]] = {}
    for path in pages(root):
        for block in code_blocks(read(path)):
            if block.name is not None:
                found.setdefault(block.name, []).append(block)
    return found


def example(name: str, *, root: Path = DOCS) -> str:
    """The text of the block named ``name`` (``:name: <name>`` on a ``{code-block}``) in the docs' pages."""
    blocks = named_blocks(root)
    found = blocks.get(name, [])
    if not found:
        known = ", ".join(sorted(blocks)) or "none"
        raise AssertionError(f"No block of docs/ is named {name!r}; the names are: {known}.")
    if len(found) > 1:
        raise AssertionError(
            f"The name {name!r} is used by {len(found)} blocks: {', '.join(map(str, found))}."
        )
    return str(found[0].source)


def unnamed(blocks: list[CodeBlock], language: str) -> Iterator[CodeBlock]:
    """The blocks of ``language`` that run as the page goes (a named one is fetched by a test instead)."""
    return (block for block in blocks if block.language == language and block.name is None)
