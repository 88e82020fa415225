"""One option vocabulary across commands (issue 34, item 10; docs/cli.md, "One vocabulary"): checked over every
command's options and ``--help``. A shared option is made from its one declaration in ``ragrade.options``
(same spelling, type, range and meaning everywhere); formats are ``--format`` (what is printed) or
``--X-format`` (the file given as X); no former spelling is left."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from ragrade import options as o
from ragrade.cli import main
from ragrade.cli._options import OptionChoice, OptionType

#: flag -> the declarations it may be made from (the gate's test is the paired tests' declaration)
SHARED: dict[str, tuple[o.Option, ...]] = {
    "--alpha": (o.ALPHA,), "--confidence": (o.CONFIDENCE,), "--resamples": (o.N_RESAMPLES,), "--seed": (o.SEED,),
    "--test": (o.TEST, o.GATE_TEST), "--correction": (o.CORRECTION,), "--ci-method": (o.CI_METHOD,),
    "--baseline": (o.BASELINE,), "--digits": (o.DIGITS,), "--max-failed": (o.MAX_FAILED,),
    "--timeout": (o.TIMEOUT,), "--max-concurrency": (o.CONCURRENCY,), "--base-url": (o.BASE_URL,),
    "--llm-seed": (o.LLM_SEED,), "--profile": (o.PROFILE,), "--matcher": (o.MATCHER,),
    "--max-memory": (o.MAX_MEMORY,), "--max-docs": (o.MAX_DOCS,), "--level": (o.REL_LEVEL,),
    "--num-docs": (o.NUM_DOCS,), "--upper-grade": (o.UPPER_GRADE,), "--hole-threshold": (o.HOLE_THRESHOLD,),
    "--ks": (o.KS,), "--power": (o.POWER,),
}
#: commands whose flag of the same spelling means something else, documented in docs/cli.md
OWN_MEANING = {("fuse", "--profile"): "a fusion profile (ranx, langchain, ...), not an evaluation profile",
               ("judge", "--profile"): "a judge profile (default, ragas, deepeval)",
               ("conventions", "--profile"): "repeatable: the profiles to include",
               ("trec_eval", "*"): "trec_eval's own options, byte for byte"}
#: X of --X-format: the file the format is of
FORMAT_OF = {"qrels", "run", "input", "output", "queries", "corpus", "response", "traces"}  # response: the LLM's replies
#: spellings that were renamed (version 0.x: nothing old is kept; CHANGELOG.md lists them)
FORMER = {"--n-resamples", "--in-format", "--out-format", "--concurrency"}


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(main)
    return [(name, main.get_command(ctx, name)) for name in main.list_commands(ctx)]  # type: ignore[misc]


COMMANDS = _commands()


def _options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_shared_options_come_from_their_one_declaration(name, cmd):
    if (name, "*") in OWN_MEANING:
        return
    for p in _options(cmd):
        for flag in p.opts:
            if flag not in SHARED or (name, flag) in OWN_MEANING:
                continue
            spec = getattr(p.type, "spec", None)
            assert isinstance(p.type, OptionType | OptionChoice) and spec is not None, (name, flag)
            assert any(spec.name == d.name and spec.flag == d.flag for d in SHARED[flag]), (name, flag, spec.name)


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_format_options_name_what_they_are_the_format_of(name, cmd):
    for p in _options(cmd):
        for flag in p.opts:
            if flag.endswith("-format") and flag != "--format":
                assert flag.removeprefix("--").removesuffix("-format") in FORMAT_OF, (name, flag)


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_no_former_spelling_and_output_is_dash_o(name, cmd):
    flags = {f for p in _options(cmd) for f in p.opts + p.secondary_opts}
    assert not flags & FORMER, (name, flags & FORMER)
    if "--output" in flags:
        assert "-o" in flags, name


@pytest.mark.parametrize(("name", "cmd"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_help_shows_each_shared_option_with_its_constraint(name, cmd):
    """The help text of a shared option is its declaration's (plus a command's own words), constraint included."""
    if (name, "*") in OWN_MEANING:
        return
    text = " ".join(CliRunner().invoke(main, [name, "--help"]).output.split())
    for p in _options(cmd):
        spec = getattr(p.type, "spec", None)
        if spec is None or spec.choices is not None:
            continue
        rule = spec.constraint() if spec.validator is None else ""
        if rule:
            assert rule in text, (name, p.opts, rule)


def test_max_failed_is_a_count_or_a_percentage_everywhere():
    having = [(name, p) for name, cmd in COMMANDS for p in _options(cmd) if "--max-failed" in p.opts]
    assert {name for name, _ in having} == {"judge", "assess", "retrieve"}
    for name, p in having:
        assert p.type.convert("3", p, None) == o.Allowance(count=3), name
        assert p.type.convert("2.5%", p, None) == o.Allowance(percent=2.5), name
        for bad in ("150%", "-1", "1.5", "x"):
            with pytest.raises(click.UsageError, match="--max-failed must be a count"):
                p.type.convert(bad, p, None)


def test_a_bad_value_is_refused_with_the_declarations_words():
    out = CliRunner().invoke(main, ["compare", "q", "a", "b", "-m", "P@1", "--resamples", "0"])
    assert out.exit_code == 2 and "--resamples must be an integer >= 1; got 0" in out.output
