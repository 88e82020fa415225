"""docs/cli.md documents every command of `ragrade` and every option of each (read from the click
commands themselves, so a new command or option without documentation fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from ragrade.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## ragrade (\S+)\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(main)
    out = []
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        assert cmd is not None, name
        out.append((name, cmd))
    return out


COMMANDS = _commands()


def test_every_command_has_a_section():
    missing = [name for name, _ in COMMANDS if name not in _sections()]
    assert not missing, f"docs/cli.md has no '## ragrade <command>' section for: {missing}"


def test_no_section_for_a_command_that_does_not_exist():
    names = {name for name, _ in COMMANDS}
    assert set(_sections()) <= names, set(_sections()) - names


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_option_of_the_command_is_documented(name, cmd):
    section = _sections().get(name, "")
    if cmd.context_settings.get("ignore_unknown_options"):  # trec_eval's options, from the drop-in's parser
        from ragrade.compat import trec_eval_args as trec_eval

        undocumented = [o for o in trec_eval.LONG_OPTIONS if o != "Debug_level" and f"`--{o}`" not in section]
        assert not undocumented, undocumented
    missing = [opt for p in cmd.params if isinstance(p, click.Option) and not p.hidden
               for opt in p.opts + p.secondary_opts if f"`{opt}`" not in section]
    assert not missing, f"docs/cli.md, section 'ragrade {name}', does not document: {missing}"


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_documented_options_exist(name, cmd):
    """An option named in a command's bullet list is one of its options (a renamed option is caught)."""
    section = _sections().get(name, "")
    known = {opt for p in cmd.params if isinstance(p, click.Option) for opt in p.opts + p.secondary_opts}
    if cmd.context_settings.get("ignore_unknown_options"):  # ragrade trec_eval parses trec_eval's own options
        from ragrade.compat import trec_eval_args as trec_eval

        known |= {f"--{long}" for long in trec_eval.LONG_OPTIONS} | {f"-{short}" for short in trec_eval.LONG_OPTIONS.values()}
    listed = {m for line in section.splitlines() if line.startswith("- ")
              for m in re.findall(r"`(-{1,2}[\w-]+)`", line.split(":")[0])}
    assert listed <= known, listed - known


def test_the_checker_notices_a_missing_option(tmp_path):
    @click.command()
    @click.option("--documented")
    @click.option("--forgotten")
    def cmd(documented, forgotten):  # pragma: no cover - never invoked
        pass

    section = "- `--documented`: yes\n"
    missing = [o for p in cmd.params for o in p.opts if f"`{o}`" not in section]
    assert missing == ["--forgotten"]
