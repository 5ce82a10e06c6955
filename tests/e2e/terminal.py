"""What a terminal session of the docs shows, against what a test that pipes the answers in reads.

A page shows a session as the user sees it: each prompt, then what they typed and Enter. With the answers
piped in, nothing echoes them, so each prompt runs on into the next line's output. ``piped`` turns the
page's session into that, from the prompts and answers the test types, so the test can compare the two
exactly."""

from __future__ import annotations

import re


def piped(session: str, typed: list[tuple[str, str]]) -> str:
    """``session`` with each ``(prompt, answer)`` line, in order, as it reads when the answer is piped in:
    the prompt alone, without the answer and its newline. An empty answer's line may have lost the prompt's
    trailing space in the page."""
    position = 0
    for prompt, answer in typed:
        line = re.compile(re.escape((prompt + answer).rstrip()) + r"[ \t]*\n")
        found = line.search(session, position)
        assert found, f"the session no longer shows {prompt + answer!r}"
        session = session[: found.start()] + prompt + session[found.end() :]
        position = found.start() + len(prompt)
    return session


def matches(output: str, expected: str) -> bool:
    """Whether ``output`` is ``expected``, but for the ids and times that differ from run to run: a
    ``'pk': 3`` (or ``"pk": 3``) stands for any pk, a ``'...'`` for any quoted value."""
    pattern = re.escape(expected.strip())
    pattern = re.sub(r"(['\"])pk\1:\\ 3", lambda found: f"{found[1]}pk{found[1]}:\\ \\d+", pattern)
    pattern = pattern.replace(r"'\.\.\.'", r"'[^']+'")
    return re.fullmatch(pattern, output.strip()) is not None
