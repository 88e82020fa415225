"""Every runnable code block of README.md and docs/*.md runs, as a reader would run it.

For each Markdown file, in order:

- a ```bash or ```sh block runs in a subprocess (``bash -e -o pipefail``) with a time limit, in a
  temporary directory holding a copy of the repository's ``examples/`` folder; later blocks of the same
  file see the files earlier blocks wrote. ``ragrade`` on PATH is this checkout's package
  (``python -m ragrade``); ``pip install`` of ragrade itself (``.``, ``-e ".[extra]"``,
  ``'ragrade[extra]'``) is a no-op that only checks the package imports, because the environment under
  test is that install (any other ``pip`` use fails);
- a ```python block runs in one namespace shared by the file's Python blocks, with the same directory as
  the working directory, under the same time limit;
- ```text, ```console, ```json ... blocks are output or data, not run.

A block may be marked by an HTML comment on the line(s) just before it:

- ``<!-- docs-test: skip (the reason) -->``: not run; the test is reported as skipped with the reason;
- ``<!-- docs-test: exit N -->``: the block must end with status N (a shell block), instead of 0.

Each block is one test (``test_docs_block[docs/gate.md:3]``), so a failure names the file and the block.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import ragrade

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell"}
PYTHON = {"python", "py"}
TIMEOUT = float(os.environ.get("RAGRADE_DOCS_TIMEOUT", "180"))

_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_MARK = re.compile(r"^<!--\s*docs-test:\s*(?P<what>skip|exit)\s*(?P<arg>.*?)\s*-->\s*$")


@dataclass
class Block:
    path: Path
    index: int  # 1-based among the runnable blocks of the file
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None = None
    exit: int = 0

    @property
    def rel(self) -> str:
        try:
            return self.path.relative_to(ROOT).as_posix()
        except ValueError:
            return self.path.name

    @property
    def id(self) -> str:
        return f"{self.rel}:{self.index}"


def parse_blocks(path: Path) -> list[Block]:
    """The runnable blocks of one Markdown file, with their marks."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group("fence"), m.group("lang").lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        code = "\n".join(lines[i + 1 : j]) + "\n"
        i = j + 1
        if lang not in SHELL | PYTHON:
            continue
        block = Block(path, len(blocks) + 1, start + 1, lang, code)
        k = start - 1
        while k >= 0 and (not lines[k].strip() or _MARK.match(lines[k].strip())):
            mark = _MARK.match(lines[k].strip())
            if mark and mark.group("what") == "skip":
                reason = mark.group("arg").strip()
                if reason.startswith("(") and reason.endswith(")"):
                    reason = reason[1:-1]
                if not reason:
                    raise AssertionError(f"{path.name}:{k + 1}: a docs-test skip mark must say why")
                block.skip = reason
            elif mark:
                block.exit = int(mark.group("arg"))
            if not lines[k].strip():
                break  # marks sit on the lines right above the fence (a blank line ends them)
            k -= 1
        blocks.append(block)
    return blocks


_PIP_SHIM = r'''#!{python}
"""pip, for the documentation tests: installing ragrade itself is a no-op (the environment under test
is that install); anything else is refused so that no test downloads a package."""
import re, sys
args = sys.argv[1:]
targets = [a for a in args[1:] if not a.startswith("-")]
ok = args[:1] == ["install"] and targets and all(
    re.fullmatch(r"""['"]?(\.|ragrade)(\[[\w,-]+\])?['"]?""", t) for t in targets)
if not ok:
    sys.exit("docs-test: pip " + " ".join(args) + " is not run by the documentation tests")
import ragrade  # noqa: F401  (the package the command would install must import)
print("docs-test: ragrade is installed (" + " ".join(args) + " not run)")
'''

_RAGRADE_SHIM = '''#!{python}
import runpy, sys
sys.argv[0] = "ragrade"
runpy.run_module("ragrade", run_name="__main__", alter_sys=True)
'''


@dataclass
class FileRun:
    """The state one Markdown file's blocks share: a directory, a PATH with the shims, a namespace."""

    blocks: list[Block]
    workdir: Path
    env: dict[str, str]
    namespace: dict[str, Any] = field(default_factory=dict)
    done: dict[int, str | None] = field(default_factory=dict)  # block index -> failure text or None

    @classmethod
    def create(cls, path: Path, base: Path) -> FileRun:
        workdir = base / path.stem
        workdir.mkdir(parents=True)
        shutil.copytree(ROOT / "examples", workdir / "examples")
        bindir = base / f"{path.stem}-bin"
        bindir.mkdir()
        for name, text in (("ragrade", _RAGRADE_SHIM), ("pip", _PIP_SHIM)):
            shim = bindir / name
            shim.write_text(text.replace("{python}", sys.executable), encoding="utf-8")
            shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        env = dict(os.environ)
        src = str(Path(ragrade.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        env["PATH"] = os.pathsep.join((str(bindir), str(Path(sys.executable).parent), env.get("PATH", "")))
        env["XDG_CACHE_HOME"] = str(base / f"{path.stem}-cache")  # judges' and retrievers' caches
        env["HOME"] = str(base / f"{path.stem}-home")
        env.pop("OPENAI_API_KEY", None)
        env["COLUMNS"] = "120"
        return cls(parse_blocks(path), workdir, env)

    def run_through(self, index: int) -> str | None:
        """Run every block up to `index` that has not run (in order); the failure of block `index`."""
        for block in self.blocks[:index]:
            if block.index not in self.done:
                self.done[block.index] = None if block.skip else self._run(block)
        return self.done[index]

    def _run(self, block: Block) -> str | None:
        where = f"{block.rel}:{block.line} ({block.lang} block {block.index})"
        if block.lang in SHELL:
            try:
                proc = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", block.code],
                    cwd=self.workdir, env=self.env, capture_output=True, text=True, timeout=TIMEOUT,
                    stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired:
                return f"{where}: did not finish in {TIMEOUT:.0f} s\n{block.code}"
            if proc.returncode != block.exit:
                return (f"{where}: exit status {proc.returncode}, expected {block.exit}\n--- block\n{block.code}"
                        f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}")
            if "Traceback (most recent call last)" in proc.stderr:
                return f"{where}: printed a traceback\n{proc.stderr[-4000:]}"
            return None
        return self._run_python(block, where)

    def _run_python(self, block: Block, where: str) -> str | None:
        old_cwd, old_env = os.getcwd(), dict(os.environ)

        def alarm(signum: int, frame: Any) -> None:
            raise TimeoutError(f"did not finish in {TIMEOUT:.0f} s")

        old_handler = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
        try:
            os.chdir(self.workdir)
            sys.path.insert(0, str(self.workdir))  # as `python` run in that directory: examples/ imports
            os.environ["XDG_CACHE_HOME"] = self.env["XDG_CACHE_HOME"]
            code = compile(block.code, f"{block.rel}:block{block.index}", "exec")
            exec(code, self.namespace)
        except BaseException as exc:  # the block's own error is the test's failure
            if isinstance(exc, KeyboardInterrupt):
                raise
            import traceback

            return f"{where}: {type(exc).__name__}: {exc}\n--- block\n{block.code}--- traceback\n{traceback.format_exc()[-4000:]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            os.chdir(old_cwd)
            if str(self.workdir) in sys.path:
                sys.path.remove(str(self.workdir))
            for name in [m for m in sys.modules if m == "examples" or m.startswith("examples.")]:
                del sys.modules[name]
            os.environ.clear()
            os.environ.update(old_env)
        return None


ALL = [b for path in DOCS for b in parse_blocks(path)]


@pytest.fixture(scope="module")
def runs():
    base = Path(tempfile.mkdtemp(prefix="ragrade-docs-"))
    state: dict[Path, FileRun] = {}
    yield base, state
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("block", ALL, ids=[b.id for b in ALL])
def test_docs_block(block: Block, runs) -> None:
    if block.skip:
        pytest.skip(f"{block.rel}:{block.line}: {block.skip}")
    base, state = runs
    if block.path not in state:
        state[block.path] = FileRun.create(block.path, base)
    failure = state[block.path].run_through(block.index)
    if failure is not None:
        pytest.fail(failure, pytrace=False)


def test_every_page_is_found_and_marks_are_well_formed(tmp_path: Path) -> None:
    assert (ROOT / "README.md") in DOCS and len(DOCS) > 5
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n<!-- docs-test: skip (needs a server) -->\n```bash\nfalse\n```\n\n"
        "<!-- docs-test: exit 2 -->\n```sh\nexit 2\n```\n\n```text\nnot run\n```\n\n```python\nx = 1\n```\n",
        encoding="utf-8",
    )
    blocks = parse_blocks(page)
    assert [(b.lang, b.skip, b.exit) for b in blocks] == [
        ("bash", "needs a server", 0), ("sh", None, 2), ("python", None, 0)]


def test_the_runner_fails_a_failing_block_and_shares_state(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\necho hi > out.txt\n```\n\n```python\nv = open('out.txt').read().strip()\n```\n\n"
        "```python\nassert v == 'hi'\n```\n\n```bash\nexit 3\n```\n\n<!-- docs-test: exit 3 -->\n```bash\nexit 3\n```\n"
        "\n```bash\nragrade --version\n```\n",
        encoding="utf-8",
    )
    run = FileRun.create(page, tmp_path / "base")
    run.blocks = parse_blocks(page)
    assert run.run_through(3) is None
    assert "exit status 3, expected 0" in (run.run_through(4) or "")
    assert run.run_through(5) is None
    assert run.run_through(6) is None


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    command = 'pip install -e ".[test]" && python -m pytest -n auto'
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_docs_page_is_in_the_site_nav() -> None:
    """mkdocs build --strict (CI) refuses a page missing from the nav; this says which, without mkdocs."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if f" {p.name}" not in nav]
    assert not missing, f"add to mkdocs.yml's nav: {missing}"
