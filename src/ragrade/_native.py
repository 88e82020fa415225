"""Which native accelerations this installation has, and the one warning when they are missing.

The optional C helper (:mod:`ragrade._accel`, built from ``src/ragrade/_accel.c`` by ``pip install``
when a C compiler is present) speeds up reading TREC files, ingesting dicts, matching ids and sorting.
Without it ragrade uses equivalent NumPy/Arrow code: the same results, several times slower (docs/benchmarks.md,
"Speed and memory of the evaluation"). ``RAGRADE_NO_ACCEL=1`` in the environment turns it off on purpose.

When the helper is missing although nobody asked for that (the build fell back), the first use of a
path it would have sped up emits one :class:`AccelerationWarning` per process (a
:class:`~ragrade.errors.RagradeWarning`); the command line prints it once as a ``note:`` line instead.
``ragrade info`` and ``ragrade --version`` say what is active. This module imports no third-party
package, so the CLI can ask it cheaply.
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType
from typing import Any

from ragrade.errors import AccelerationWarning

#: The environment variable that turns the C helper off.
DISABLE_VARIABLE = "RAGRADE_NO_ACCEL"


def _load() -> tuple[ModuleType | None, str | None]:
    if os.environ.get(DISABLE_VARIABLE):
        return None, f"turned off by {DISABLE_VARIABLE}={os.environ[DISABLE_VARIABLE]}"
    try:
        from ragrade import _accel
    except ImportError as exc:
        return None, f"not built ({exc})"
    return _accel, None


accel, reason = _load()
_warned = False


def disabled_on_purpose() -> bool:
    return bool(os.environ.get(DISABLE_VARIABLE))


def fallback_message() -> str | None:
    """The warning text when the helper is missing although it was not turned off, else None."""
    if accel is not None or disabled_on_purpose():
        return None
    return (f"ragrade's C helper is {reason}: using the pure-Python fallback (same results, several times "
            "slower). Reinstall ragrade where a C compiler is available (e.g. `pip install --force-reinstall "
            "--no-binary ragrade ragrade`, or `pip install -e .` in a clone); `ragrade info` shows what is active")


def warn_fallback() -> None:
    """Emit :class:`AccelerationWarning` once per process if the build fell back (not when disabled)."""
    global _warned
    if _warned:
        return
    message = fallback_message()
    _warned = True
    if message is not None:
        warnings.warn(message, AccelerationWarning, stacklevel=3)


def features() -> dict[str, Any]:
    """What the C helper of this build does (empty without it)."""
    if accel is None:
        return {}
    get = getattr(accel, "features", None)
    return dict(get()) if get is not None else {}


def status() -> dict[str, Any]:
    """``{"c_helper": "active" | "disabled" | "missing", "reason": ..., "path": ..., "features": {...}}``."""
    if accel is not None:
        return {"c_helper": "active", "reason": None, "path": getattr(accel, "__file__", None),
                "features": features()}
    return {"c_helper": "disabled" if disabled_on_purpose() else "missing", "reason": reason, "path": None,
            "features": {}}


def summary() -> str:
    """One line: ``C helper: active (SSE2, file mapping)`` or why it is not."""
    st = status()
    if st["c_helper"] == "active":
        names = {"sse2": "SSE2", "file_map": "file mapping", "page_release": "page release",
                 "address_sanitizer": "AddressSanitizer build"}
        on = [label for key, label in names.items() if st["features"].get(key)]
        return "C helper: active" + (f" ({', '.join(on)})" if on else "")
    return f"C helper: {st['reason']}; pure-Python fallback in use"
