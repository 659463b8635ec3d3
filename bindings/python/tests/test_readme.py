"""The READMEs run as written.

Every ```c and ```python block of README.md and bindings/python/README.md is
a complete program, compiled and run here, in a directory of its own,
against the library under test; a block that needs a server reads
``KINTO_URL``, set to the suite's Kinto. A block whose first line is a
comment starting with "Fragment" (``# Fragment: ...``, ``/* Fragment: ...``)
shows calls out of context and says what it assumes: it is not run (a
Python one must still parse). Paths the READMEs name stay inside the
repository and exist.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, NamedTuple

import pytest

import tureen

from conftest import REPO, child_env

READMES = [REPO / "README.md", REPO / "bindings" / "python" / "README.md"]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
FRAGMENT = re.compile(r"\A\s*(#|/\*)\s*Fragment\b")
C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]


class Block(NamedTuple):
    readme: Path
    line: int
    language: str
    code: str

    @property
    def name(self) -> str:
        return "%s:%d" % (self.readme.relative_to(REPO), self.line)

    @property
    def complete(self) -> bool:
        return self.language in ("c", "python") and not FRAGMENT.match(self.code)


def blocks(readme: Path) -> List[Block]:
    text = readme.read_text(encoding="utf-8")
    return [Block(readme, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in FENCE.finditer(text)]


ALL = [block for readme in READMES for block in blocks(readme)]
COMPLETE = [block for block in ALL if block.complete]


def test_each_readme_has_complete_programs() -> None:
    # The rule above could otherwise match nothing and test nothing.
    for readme in READMES:
        assert [b for b in COMPLETE if b.readme == readme and b.language == "python"], readme
    assert [b for b in COMPLETE if b.language == "c"]


@pytest.mark.parametrize("block", [b for b in ALL if b.language == "python" and not b.complete], ids=lambda b: b.name)
def test_a_python_fragment_parses(block: Block) -> None:
    ast.parse(block.code, block.name)


def library_dir(tmp_path: Path) -> Path:
    """A directory holding the library under test by the names a program
    links it by (-ltureen) and loads it by (its SONAME)."""
    real = Path(tureen.LIBRARY_PATH).resolve()
    directory = tmp_path / "lib"
    directory.mkdir()
    names = {"libtureen.so"}
    dynamic = subprocess.run(["readelf", "-d", str(real)], capture_output=True, text=True).stdout
    names.update(re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dynamic))
    for name in names:
        (directory / name).symlink_to(real)
    return directory


@pytest.mark.parametrize("block", COMPLETE, ids=lambda b: b.name)
def test_a_complete_program_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    env = child_env()
    if "KINTO_URL" in block.code:
        env["KINTO_URL"] = request.getfixturevalue("kinto").url
    work = tmp_path / "work"
    work.mkdir()
    if block.language == "python":
        program = work / "program.py"
        program.write_text(block.code, encoding="utf-8")
        command = [sys.executable, str(program)]
    else:
        source = tmp_path / "program.c"
        source.write_text(block.code, encoding="utf-8")
        lib = library_dir(tmp_path)
        binary = tmp_path / "program"
        built = subprocess.run([os.environ.get("CC", "cc"), *C_FLAGS, "-I", str(REPO / "include"), str(source),
                                "-L", str(lib), "-ltureen", "-Wl,-rpath," + str(lib), "-o", str(binary)],
                               capture_output=True, text=True, timeout=120)
        assert built.returncode == 0, "%s does not compile:\n%s" % (block.name, built.stderr)
        command = [str(binary)]
    ran = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, "%s failed:\n%s%s" % (block.name, ran.stdout, ran.stderr)


# A path in backquotes or a link: a name with a slash and a file's ending.
PATH = re.compile(r"`([\w.][\w./-]*/[\w.-]+\.(?:md|c|h|py|sql|sh|toml|json))`|\]\(([^)#:\s]+)\)")


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_paths_a_readme_names_are_in_the_repository(readme: Path) -> None:
    text = readme.read_text(encoding="utf-8")
    named = {m.group(1) or m.group(2) for m in PATH.finditer(text)}
    assert named, readme
    missing = []
    for name in sorted(named):
        found = [base / name for base in (readme.parent, REPO) if (base / name).exists()]
        if not any(REPO.resolve() in p.resolve().parents for p in found):
            missing.append(name)
    assert missing == [], "%s names paths not in the repository: %s" % (readme.name, missing)
