"""What a reader accepts as an input path: regular files, and pipes read as streams.

* A **regular file** (or a Parquet directory, where the reader allows one) is read in place.
* A **pipe** — a FIFO made with ``mkfifo``, ``/dev/stdin`` fed by a pipe, a shell's process substitution
  such as ``<(zcat run.gz)`` (``/dev/fd/63``) — cannot be sought, so it is copied once, as it arrives,
  into a private temporary file with the same base name (so the format is told and the run named as for
  the file itself, in the system's temporary directory: ``TMPDIR``), read from there and deleted. Errors name the path given, not the copy. Waiting has a
  bound: when no byte arrives for :func:`pipe_timeout` seconds (a FIFO nobody writes to, a stalled
  writer), the read stops with an error instead of hanging. A text pipe with a line longer than
  :data:`~ragrade.io.textfiles.MAX_LINE_BYTES` (``cat /dev/zero |``) is refused as the copy is made.
* Anything else — a character device such as ``/dev/zero`` or a terminal, a block device, a socket — is
  refused with an :class:`~ragrade.errors.InputError` naming the path.

See docs/formats.md, "Pipes, devices and limits".
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator

from ragrade.errors import InputError, ParseError, RagradeError

__all__ = ["PIPE_TIMEOUT", "check_input", "is_pipe", "pipe_timeout", "readable_path"]

#: Seconds a pipe may stay silent (no writer yet, or a writer that sends nothing) before the read stops;
#: the environment variable ``RAGRADE_PIPE_TIMEOUT`` overrides it.
PIPE_TIMEOUT = 60.0

_GZIP = b"\x1f\x8b"
_PARQUET = b"PAR1"


def pipe_timeout() -> float:
    """:data:`PIPE_TIMEOUT`, or ``RAGRADE_PIPE_TIMEOUT`` (seconds) when set."""
    raw = os.environ.get("RAGRADE_PIPE_TIMEOUT")
    if raw is None:
        return PIPE_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise InputError("RAGRADE_PIPE_TIMEOUT must be a number of seconds", value=raw) from None
    if not value > 0:
        raise InputError("RAGRADE_PIPE_TIMEOUT must be a positive number of seconds", value=raw)
    return value


def _kind(mode: int) -> str | None:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def check_input(path: str | os.PathLike[str], *, directory_ok: bool = False) -> str:
    """``path`` as a string, after checking that it names something a reader can read: an existing
    regular file, a pipe (see :func:`is_pipe`) or, with ``directory_ok``, a directory. Anything else is an
    :class:`~ragrade.errors.InputError` (:class:`~ragrade.errors.ParseError`) naming it."""
    try:
        p = os.fspath(path)
    except TypeError:
        raise InputError(f"a file path must be a string or os.PathLike, not {type(path).__name__}",
                         value=repr(path)[:80]) from None
    if not isinstance(p, str):
        p = os.fsdecode(p)
    if "\x00" in p:
        raise InputError("a file path cannot contain a NUL byte", value=p)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise ParseError("no such file", path=p) from None
    except OSError as exc:
        raise ParseError(f"cannot open the file ({exc.strerror or exc})", path=p) from None
    if stat.S_ISDIR(st.st_mode):
        if directory_ok:
            return p
        raise ParseError("is a directory, not a file", path=p)
    kind = _kind(st.st_mode)
    if kind is not None:
        raise ParseError(f"is {kind}, not a file or a pipe: ragrade reads regular files and pipes (such as "
                         "<(zcat run.gz) or a FIFO)", path=p)
    return p


def is_pipe(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a pipe (a FIFO, or ``/dev/stdin`` / ``/dev/fd/N`` open on one)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def readable_path(path: str | os.PathLike[str], *, directory_ok: bool = False) -> Iterator[str]:
    """A path the readers can open, seek and map: ``path`` itself for a regular file, else a private copy
    of the pipe's content (deleted on exit). Errors raised inside the block name ``path``, not the copy.
    See the module docstring for the bounds."""
    p = check_input(path, directory_ok=directory_ok)
    if not is_pipe(p):
        yield p
        return
    folder = tempfile.mkdtemp(prefix="ragrade-pipe-")
    copy = os.path.join(folder, os.path.basename(p.rstrip("/")) or "stdin")
    try:
        _spool(p, copy)
        try:
            yield copy
        except RagradeError as exc:
            _rename_in_error(exc, copy, p)
            raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _rename_in_error(exc: RagradeError, copy: str, original: str) -> None:
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (exc.args[0].replace(copy, original), *exc.args[1:])
    if getattr(exc, "path", None) == copy:
        exc.path = original  # type: ignore[attr-defined]


def _spool(src: str, dst: str) -> None:
    """Copy the pipe ``src`` into the new file ``dst`` as its bytes arrive, waiting at most
    :func:`pipe_timeout` seconds for each, and refusing a text line longer than ``MAX_LINE_BYTES``."""
    from ragrade.io.textfiles import MAX_LINE_BYTES, line_too_long

    timeout = pipe_timeout()
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK)  # never blocks, even with no writer yet
    except OSError as exc:
        raise ParseError(f"cannot open the pipe ({exc.strerror or exc})", path=src) from None
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    seen_data = False
    text: bool | None = None  # decided by the first bytes: gzip and Parquet are not checked for lines
    since_newline = 0
    lines = 0
    try:
        with open(dst, "wb") as out:
            deadline = time.monotonic() + timeout
            while True:
                events: list[tuple[int, int]] = []
                while not events:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        what = "nothing was written to it" if not seen_data else "its writer stopped sending"
                        raise ParseError(f"waited {timeout:g} s for data from the pipe and {what} (is a program "
                                         "writing to it? RAGRADE_PIPE_TIMEOUT sets the wait)", path=src)
                    events = poller.poll(max(1, int(left * 1000)))
                try:
                    block = os.read(fd, 1 << 20)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise ParseError(f"cannot read the pipe ({exc.strerror or exc})", path=src) from None
                if not block:
                    if any(ev & select.POLLHUP for _, ev in events) or seen_data:
                        break  # the writer closed its end
                    time.sleep(0.01)  # no writer has opened the FIFO yet: POLLIN without data
                    continue
                if text is None:
                    text = not (block.startswith(_GZIP) or block.startswith(_PARQUET))
                seen_data = True
                deadline = time.monotonic() + timeout
                if text:
                    nl = block.rfind(b"\n")
                    if nl < 0:
                        since_newline += len(block)
                    else:
                        lines += block.count(b"\n")
                        since_newline = len(block) - nl - 1
                    if since_newline > MAX_LINE_BYTES:
                        raise line_too_long(src, lines + 1)
                try:
                    out.write(block)
                except OSError as exc:  # the temporary directory is full (an endless pipe?)
                    raise ParseError(f"cannot copy the pipe to a temporary file in {tempfile.gettempdir()} "
                                     f"({exc.strerror or exc}); is the pipe endless? Save it to a file "
                                     "first", path=src) from None
    finally:
        os.close(fd)
