"""Build hook for the optional C accelerators: ``ragrade._accel`` (the engine's) and ``ragrade.compat._speedups``
(the drop-ins', a module of their own: ``ragrade.compat`` uses only ragrade's public API and it).

Everything else is configured in pyproject.toml. The extension is optional: if no C compiler is
available the build skips it and ragrade uses its pure-Python fallback (same results, slower). The skip
is said loudly here (shown by ``pip install -v``), and again at the first use of ragrade (one warning per
process; ``ragrade info`` shows what is active).

``RAGRADE_SANITIZE=1`` builds the extension with AddressSanitizer and UndefinedBehaviorSanitizer
(``-fsanitize=address,undefined``, no optimisation), and then it is not optional: the CI job that checks
the C code must not silently test the fallback (see ``.ci/run``).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SANITIZE = bool(os.environ.get("RAGRADE_SANITIZE"))


class BuildExt(build_ext):
    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            bar = "=" * 78
            sys.stderr.write(
                f"\n{bar}\nragrade: the optional C helper ({ext.name}) could not be built: {exc}\n"
                "ragrade will use its pure-Python fallback: the same results, several times slower.\n"
                "Install a C compiler (and the Python headers) and reinstall to get it; `ragrade info` shows\n"
                f"what is active.\n{bar}\n\n"
            )
            raise


flags = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1", "-g"] if SANITIZE else []
ext = Extension("ragrade._accel", ["src/ragrade/_accel.c"], optional=not SANITIZE, extra_compile_args=flags,
                extra_link_args=flags[:1])
drop_ins = Extension("ragrade.compat._speedups", ["src/ragrade/compat/_speedups.c"], optional=not SANITIZE,
                     extra_compile_args=flags, extra_link_args=flags[:1])

setup(ext_modules=[ext, drop_ins], cmdclass={"build_ext": BuildExt})
