"""How well each core module's own tests pin it down, as a mutation score, with mutmut.

Run: ``make mutation`` (it installs the ``mutation`` dependency group first), or for some modules only
``.venv/bin/python bench/mutation.py mcpforms/schema.py``. It informs and never gates: it exits 0 whatever
the scores, and non-zero only when mutmut itself fails.

mutmut changes one small thing at a time in a module (``<`` for ``<=``, a string, a dropped argument) and
runs the tests that reach the changed function. A mutant the tests fail on is killed; one they pass
on survived, i.e. the tests did not notice the change. A timeout counts as killed, as in mutmut's own
score. Each module is run against its own test module only (``MUTATION_PAIRS``), so a module that is
merely exercised by other modules' tests scores what its own tests prove.

One mutmut run per module, each in ``mutants/<module>/``: a generated ``pyproject.toml`` (ours plus that
run's ``[tool.mutmut]`` table, since mutmut reads its options from the working directory's pyproject and
takes none on the command line) and links to the source tree, which mutmut copies into
``mutants/<module>/mutants/`` and mutates there. Each run starts afresh: mutmut keeps a survivor's
verdict until the function's source changes, so a test added to kill it would go unnoticed. The folder is
kept after the run for a closer look: ``cd mutants/mcpforms.schema && ../../.venv/bin/mutmut results``
lists the survivors, ``mutmut show NAME`` the change one made.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "mutants"

# Each core module and the one test module that must pin it down. The only list of them: the Makefile and
# the docs name none.
MUTATION_PAIRS: dict[str, str] = {
    "mcpforms/protocol/state.py": "tests/protocol/test_state.py",
    "mcpforms/protocol/tokens.py": "tests/protocol/test_tokens.py",
    "mcpforms/answers.py": "tests/test_answers.py",
    "mcpforms/schema.py": "tests/test_schema.py",
    "mcpforms/flow.py": "tests/test_flow.py",
}

# What mutmut's copy needs besides the package, tests/ and pyproject.toml (which mutmut copies itself) to
# be the Django project the tests run in: tests.settings installs the demo app from project/.
ALSO_COPY = ["project", "templates", "manage.py"]


@dataclass
class Score:
    killed: int
    survived: int
    untested: int
    timeouts: int
    other: int
    seconds: float

    @property
    def tested(self) -> int:
        return self.killed + self.survived + self.untested + self.other

    def line(self, label: str, untested_by: str) -> str:
        percent = f"{100 * self.killed / self.tested:.1f}%" if self.tested else "no mutants"
        line = (
            f"{label}: {self.killed} of {self.tested} mutants killed ({percent}), {self.survived} survived, "
            f"{self.untested} not reached by {untested_by}, {self.timeouts} timeouts"
        )
        if self.other:
            line += f", {self.other} suspicious or crashed"
        return f"{line} [{self.seconds:.0f} s]"

    def __add__(self, other: Score) -> Score:
        return Score(
            killed=self.killed + other.killed,
            survived=self.survived + other.survived,
            untested=self.untested + other.untested,
            timeouts=self.timeouts + other.timeouts,
            other=self.other + other.other,
            seconds=self.seconds + other.seconds,
        )


class MutmutFailed(Exception):
    pass


def mutmut_config(module: str, tests: str) -> str:
    package = module.split("/")[0]
    table = {
        # The whole package is copied so it imports; only the module is mutated.
        "source_paths": [package],
        "only_mutate": [module],
        "pytest_add_cli_args_test_selection": [tests],
        "also_copy": ALSO_COPY,
    }
    # A JSON list of strings is a TOML array.
    return "\n[tool.mutmut]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())


def work_dir(module: str) -> Path:
    return WORK / module.removesuffix(".py").replace("/", ".")


def run_pair(mutmut: Path, module: str, tests: str) -> Score:
    work = work_dir(module)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in (module.split("/")[0], "tests", *ALSO_COPY):
        (work / name).symlink_to(ROOT / name)
    pyproject = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(pyproject + mutmut_config(module, tests))
    # Forked workers would share one PostgreSQL test database; SQLite in memory is each process's own.
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"}
    log = work / "mutmut.log"
    started = time.monotonic()
    # mutmut's output (and pytest's, when a run fails) goes to the log, never to this script's output.
    with log.open("w") as out:
        for command in ("run", "export-cicd-stats"):
            exit_code = subprocess.call([mutmut, command], cwd=work, env=env, stdout=out, stderr=out)
            if exit_code:
                raise MutmutFailed(f"`mutmut {command}` exited with {exit_code}: see {log.relative_to(ROOT)}")
    counts = json.loads((work / "mutants" / "mutmut-cicd-stats.json").read_text())
    killed, timeouts, survived, untested = (counts[k] for k in ("killed", "timeout", "survived", "no_tests"))
    tested = counts["total"] - counts["skipped"]
    return Score(
        killed=killed + timeouts,
        survived=survived,
        untested=untested,
        timeouts=timeouts,
        other=tested - killed - timeouts - survived - untested,
        seconds=time.monotonic() - started,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    choices = ", ".join(MUTATION_PAIRS)
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=f"default: all of {choices}")
    modules = parser.parse_args().modules or list(MUTATION_PAIRS)
    unknown = [module for module in modules if module not in MUTATION_PAIRS]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)}: choose among {choices}")
    mutmut = Path(sys.executable).parent / "mutmut"
    if not mutmut.exists():
        sys.exit(f"{mutmut} is missing: `make mutation` installs it (the `mutation` dependency group).")

    total = Score(killed=0, survived=0, untested=0, timeouts=0, other=0, seconds=0)
    scored: list[str] = []
    for module in modules:
        tests = MUTATION_PAIRS[module]
        print(f"{module}: mutating, against {tests} ...", flush=True)
        try:
            score = run_pair(mutmut, module, tests)
        except MutmutFailed as error:
            print(f"{module}: {error}", flush=True)
            continue
        print(score.line(module, tests), flush=True)
        total += score
        scored.append(module)
    if len(scored) > 1:
        print(total.line("total", "their tests"))
    if scored:
        folders = " or ".join(str(work_dir(module).relative_to(ROOT)) for module in scored)
        mutmut_there = os.path.relpath(mutmut, work_dir(scored[0]))
        print(f"Survivors: `{mutmut_there} results` in {folders} lists them, `mutmut show NAME` shows one.")
    return 0 if len(scored) == len(modules) else 1


if __name__ == "__main__":
    sys.exit(main())
