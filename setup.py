"""Build hook for the optional C accelerator (``ragrade._accel``).

Everything else is configured in pyproject.toml. The extension is optional: if no C compiler is
available the build skips it and ragrade uses its pure-Python fallback (same results, slower dict
ingestion).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("ragrade._accel", ["src/ragrade/_accel.c"], optional=True)])
