"""Start-up time of the command line: fresh processes, best of N.

Times ``ragrade --help``, ``ragrade metrics`` and ``ragrade evaluate`` on the shipped examples, each in a
fresh interpreter (``python -m ragrade ...``, so a console-script shim such as pyenv's is not counted),
and prints each against its target (issue 11: ``--help`` and ``metrics`` at most 0.15 s, ``evaluate`` on
the examples at most 0.35 s, on a 2-core machine) with PASS or FAIL. The bare interpreter start
(``python -c pass``) is printed for reference.

Then it says where the time of ``ragrade --help`` goes: ``python -X importtime`` lists every module
imported and its cumulative import time; the biggest top-level packages are printed, and whether the
``ragrade.cli`` package itself pulled in NumPy, pandas, pyarrow or rich (it must not: they are imported
only when a command needs them).

Usage: ``python bench/bench_startup.py [--repeat 7]``. The machine is shared: figures vary; the best of
``--repeat`` runs is kept, as ``timeit`` does.

Bytecode: an installed package has its ``.pyc`` files (pip compiles them on install), so the processes
timed here may write and read bytecode even where ``PYTHONDONTWRITEBYTECODE`` is set (as on some
sandboxes, where every run would otherwise compile ragrade's sources again: about 0.1 s more), into a
temporary ``PYTHONPYCACHEPREFIX`` (the source tree is left untouched); one untimed run warms it.

Last, it checks that ``ragrade evaluate`` on the examples never imports pandas (pandas alone takes longer
to import than the whole target): ``tests/cli/test_startup_imports.py`` keeps that true.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
HEAVY = ("numpy", "pandas", "pyarrow", "rich", "scipy", "httpx", "matplotlib")


_PYCACHE = tempfile.mkdtemp(prefix="ragrade-bench-pyc-")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = _PYCACHE
    return env


def best_of(cmd: list[str], repeat: int) -> float:
    subprocess.run(cmd, capture_output=True, env=_env(), cwd=ROOT)  # untimed: writes the bytecode
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, env=_env(), cwd=ROOT)
        times.append(time.perf_counter() - t0)
        if res.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.decode()[-500:]}")
    return min(times)


def import_breakdown(args: list[str], top: int = 6) -> tuple[list[tuple[str, float]], float, dict[str, float]]:
    """``(biggest modules imported at top level by cumulative import time, their total, {heavy package:
    its own cumulative import time})``."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "ragrade", *args], capture_output=True,
                         text=True, env=_env(), cwd=ROOT)
    rows = []
    for line in res.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), len(m.group(3)), m.group(4)))
    depth0 = [(name, cum / 1e6) for cum, indent, name in rows if indent == 1]
    total = sum(t for _, t in depth0)
    heavy = {name: cum / 1e6 for cum, _, name in rows if name in HEAVY}
    return sorted(depth0, key=lambda x: -x[1])[:top], total, heavy


def cli_package_imports() -> set[str]:
    """Heavy packages imported by ``import ragrade.cli`` beyond what ``import ragrade`` already imports."""
    code = ("import sys; import ragrade; before = set(sys.modules); import ragrade.cli, ragrade.cli._output; "
            "print(' '.join(sorted({m.split('.')[0] for m in set(sys.modules) - before})))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=ROOT)
    return set(res.stdout.split()) & set(HEAVY)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    py = [sys.executable]
    bare = best_of([*py, "-c", "pass"], args.repeat)
    cases = [
        ("ragrade --help", [*py, "-m", "ragrade", "--help"], 0.15),
        ("ragrade metrics", [*py, "-m", "ragrade", "metrics"], 0.15),
        ("ragrade evaluate (examples)", [*py, "-m", "ragrade", "evaluate", str(EXAMPLES / "qrels.tsv"),
                                         str(EXAMPLES / "run.tsv"), "-m", "ndcg@10", "-m", "recall@5"], 0.35),
    ]
    print(f"start-up, fresh processes, best of {args.repeat} (python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs; shared machine)")
    print(f"  {'python -c pass':<30} {bare:6.3f} s   (the interpreter alone)")
    ok = True
    for label, cmd, target in cases:
        t = best_of(cmd, args.repeat)
        verdict = "PASS" if t <= target else "FAIL"
        ok &= t <= target
        print(f"  {label:<30} {t:6.3f} s   target <= {target:.2f} s   {verdict}")
    evaluate_args = ["evaluate", str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / "run.tsv"), "-m", "ndcg@10", "-m",
                     "recall@5"]
    for label, argv in (("ragrade --help", ["--help"]), ("ragrade metrics", ["metrics"]),
                        ("ragrade evaluate", evaluate_args)):
        biggest, total, heavy = import_breakdown(argv)
        print(f"\nwhere the imports of `{label}` go (python -X importtime, cumulative, top-level modules; "
              f"{total:.3f} s in all):")
        for name, t in biggest:
            print(f"  {name:<28} {t:6.3f} s")
        print("  of which heavy packages (each with what it imports): "
              + (", ".join(f"{k} {v:.3f} s" for k, v in sorted(heavy.items(), key=lambda x: -x[1])) or "none"))
    code = ("import sys; from ragrade.cli import main; sys.argv = ['ragrade', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('PANDAS', 'pandas' in sys.modules, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, *evaluate_args], capture_output=True, text=True,
                         env=_env(), cwd=ROOT)
    loaded = "PANDAS True" in res.stderr
    print(f"\n`ragrade evaluate` on the examples imports pandas: {'yes' if loaded else 'no'}")
    extra = cli_package_imports()
    print(f"\nheavy packages that `import ragrade.cli` adds to `import ragrade`: {', '.join(sorted(extra)) or 'none'}")
    print("all targets met" if ok else "some targets missed")
    shutil.rmtree(_PYCACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
