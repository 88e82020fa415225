"""Generate docs/metrics.md from the metric registry.

Usage: ``python scripts/gen_metrics_doc.py`` (writes the file) or ``--check`` (exit 1 if it is stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ragrade.cli.metrics_cmd import render_markdown

TARGET = Path(__file__).resolve().parent.parent / "docs" / "metrics.md"


def main(argv: list[str]) -> int:
    text = render_markdown()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python scripts/gen_metrics_doc.py", file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
