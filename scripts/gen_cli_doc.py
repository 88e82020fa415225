"""Regenerate the option lists of docs/cli.md from the commands themselves.

Each ``## ragrade COMMAND`` section keeps its prose; its list of options (the lines starting with "- `-")
is rewritten from the click command: flags, metavar or choices, help, default, "Required." Run
``python scripts/gen_cli_doc.py`` after adding or changing an option (``tests/cli/test_cli_docs.py`` fails until
the page documents it); ``--check`` exits 1 when the page is not up to date.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from ragrade.cli import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
SKIP = {"trec_eval"}  # its options are trec_eval's, documented by hand from the drop-in's parser


def _metavar(p: click.Option, ctx: click.Context) -> str:
    if p.is_flag:
        return ""
    if isinstance(p.type, click.Choice):
        return " (" + " / ".join(f"`{c}`" for c in p.type.choices) + ")"
    if p.metavar:
        return f" `{p.metavar}`"
    if isinstance(p.type, click.IntRange | click.FloatRange):
        return " `NUMBER`"
    try:
        shown = p.type.get_metavar(p, ctx)
    except TypeError:
        shown = None
    return f" `{shown or p.type.name.upper()}`"


def _default(p: click.Option) -> str:
    default = p.default
    if p.is_flag and not p.secondary_opts:
        return ""
    if default is None or default == () or type(default).__name__ == "Sentinel":
        return ""
    if isinstance(default, tuple | list):
        default = ",".join(map(str, default))
    if isinstance(default, bool):
        default = p.opts[0] if default else p.secondary_opts[0]
    return f" Default: `{default}`."


def option_line(p: click.Option, ctx: click.Context, old: dict[str, str]) -> str:
    flags = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
    text = " ".join((p.help or "").split())
    if not text:  # an option without help text keeps the page's words
        return old.get(flags) or f"- {flags}{_metavar(p, ctx)}:{_default(p)}"
    if isinstance(p.type, click.IntRange | click.FloatRange):
        text = text.rstrip(".") + f" ({p.type._describe_range()})"  # click's own words for the range
    if not text.endswith("."):
        text += "."
    line = f"- {flags}{_metavar(p, ctx)}: {text}{_default(p)}"
    return line + (" Required." if p.required else "")


def render(name: str, cmd: click.Command, old_lines: list[str]) -> list[str]:
    ctx = click.Context(cmd, info_name=name)
    joined: list[str] = []  # an option's wrapped lines joined into one
    for line in old_lines:
        if line.startswith("  ") and joined:
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    old = {_flags_of(line): line for line in joined}
    return [option_line(p, ctx, old) for p in cmd.params if isinstance(p, click.Option) and not p.hidden
            and p.name not in ("help",)]


def _flags_of(line: str) -> str:
    """The flags part of a documented option line (```-m`, `--metric```)."""
    head = line[2:].split(":", 1)[0]
    return ", ".join(m for m in re.findall(r"`-{1,2}[\w-]+`", head))


def regenerate(text: str) -> str:
    ctx = click.Context(main)
    parts = re.split(r"(^## ragrade \S+\s*$)", text, flags=re.M)
    out = [parts[0]]
    for head, body in zip(parts[1::2], parts[2::2], strict=True):
        name = head.split()[-1]
        cmd = main.get_command(ctx, name)
        if cmd is None or name in SKIP:
            out += [head, body]
            continue
        lines = body.split("\n")
        first = next((i for i, line in enumerate(lines) if line.startswith("- `-")), None)
        if first is None:
            out += [head, body]
            continue
        last = first
        while last + 1 < len(lines) and (lines[last + 1].startswith("- `-") or lines[last + 1].startswith("  ")):
            last += 1
        lines[first:last + 1] = render(name, cmd, lines[first:last + 1])
        out += [head, "\n".join(lines)]
    return "".join(out)


if __name__ == "__main__":
    old = DOC.read_text(encoding="utf-8")
    new = regenerate(old)
    if "--check" in sys.argv[1:]:
        sys.exit(0 if new == old else 1)
    DOC.write_text(new, encoding="utf-8")
