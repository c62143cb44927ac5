"""The README and docs/*.md: their code is the code that is compiled and run, their links lead
somewhere.

- A fenced block right after ``<!-- snippet: PATH -->`` must appear verbatim in PATH (a file
  of the repository: an example that cargo compiles, a Python example run below) or, for a
  Rust file, in its ``//!`` documentation (a doc test), so a page cannot drift from the code.
  Every Rust and Python block of the README carries one.
- A fenced block right after ``<!-- output: PATH -->`` (PATH a Python script) is what that
  script prints: it is run here, in this test's namespace, and compared line by line.
- Every relative link of these pages names an existing file, and its ``#anchor`` a heading of
  that file.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import Iterator, List, Tuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# A marker, then (after optional blank lines) a fenced block: its language and its text.
MARKED = re.compile(r"<!-- (snippet|output): (\S+) -->\n\s*```(\w*)\n(.*?)^```", re.S | re.M)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def marked(kind: str) -> Iterator[Tuple[str, str, str, str]]:
    """(page, path, language, text) of every block marked `kind`."""
    for page in PAGES:
        for m in MARKED.finditer(page.read_text()):
            if m.group(1) == kind:
                yield page.name, m.group(2), m.group(3), m.group(4)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> List[str]:
    text = FENCE.sub("", path.read_text())  # a `# comment` in a code block is no heading
    return [slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)]


def test_pages_have_snippets_to_check() -> None:
    # The test checks something: the README's examples and the docs' moved examples.
    assert {path for _, path, _, _ in marked("snippet")} >= {
        "crates/horus/examples/pubsub.rs",
        "python/examples/pubsub.py",
        "crates/horus/examples/service.rs",
        "python/examples/service.py",
        "crates/horus-params/examples/params.rs",
        "crates/horus-actions/examples/drive.rs",
        "crates/horus/examples/ros_scan.rs",
        "python/examples/ros_scan_listener.py",
        "python/examples/tensor.py",
        "crates/horus-sched/src/lib.rs",
    }
    assert {path for _, path, _, _ in marked("output")} >= {"python/examples/pubsub.py", "python/examples/tensor.py"}


@pytest.mark.parametrize("page,path,lang,text", list(marked("snippet")))
def test_snippet_is_verbatim_in_its_file(page: str, path: str, lang: str, text: str) -> None:
    source = (ROOT / path).read_text()
    if path.endswith(".rs"):  # the crate documentation's doc tests, as rustdoc shows them
        source += "\n" + "\n".join(re.sub(r"^//! ?", "", line) for line in source.splitlines() if line.startswith("//!"))
    assert text in source, f"{page}: the {lang} block marked `snippet: {path}` is not in {path} as written"


def test_every_readme_code_block_is_a_checked_snippet() -> None:
    readme = (ROOT / "README.md").read_text()
    checked = {m.start(4) for m in MARKED.finditer(readme)}
    for m in FENCE.finditer(readme):
        if m.group(1) in ("rust", "python"):
            assert m.start(2) in checked, f"README.md: a {m.group(1)} block without `<!-- snippet: PATH -->`"


@pytest.mark.parametrize("page,path,lang,text", list(marked("output")))
def test_output_is_what_the_script_prints(page: str, path: str, lang: str, text: str) -> None:
    assert path.endswith(".py"), f"{page}: only Python scripts are run here, not {path}"
    run = subprocess.run(
        [sys.executable, str(ROOT / path)], capture_output=True, text=True, timeout=60, env=dict(os.environ)
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == text.splitlines(), f"{page}: the output shown for {path} is not what it prints"


def test_python_service_example_runs() -> None:
    # docs/services.md shows it without its output (counters); it must run to the end.
    run = subprocess.run(
        [sys.executable, str(ROOT / "python/examples/service.py")], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert "'timed_out': 1" in run.stdout


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: pathlib.Path) -> None:
    broken = []
    for m in LINK.finditer(FENCE.sub("", page.read_text())):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.name}: " + ", ".join(broken)
