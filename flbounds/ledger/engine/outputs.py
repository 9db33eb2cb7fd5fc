"""Output paths: checked before any work starts, written without leaving debris.

:func:`output_file` and :func:`output_folder` check a path a command will write (``--json``,
``--results``, ``--out``) and raise :class:`OutputError` (a ``ValueError`` whose message
starts with the option) for a file where a folder is expected, a folder where a file is
expected, or no write permission. Missing folders are no error for either: they are created
when the output is written (the nearest existing one must be writable). Permission is
probed by creating (and at once removing) a file, so read-only file systems and root's
bypass of mode bits are caught; a device is probed by an empty write, so one that refuses
every write (``/dev/full``) is caught before the work, not after it.

:func:`write_text` writes through symlinks (the target is written, the link kept), streams
into pipes, terminals and device files (``-`` is standard output), and replaces a regular
file atomically: a temporary file in the same folder, renamed over the target only when
complete, removed on any failure.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

__all__ = ["OutputError", "Target", "output_file", "output_folder", "write_text"]


class OutputError(ValueError):
    """An output path that cannot be written; the message names the option."""


class Target(NamedTuple):
    """A checked output file: ``kind`` is ``stdout``, ``stream`` (pipe or device) or
    ``file`` (a regular file, existing or not; ``path`` is the symlink-resolved target)."""

    kind: str
    path: Path | None
    option: str


def output_file(path: str | os.PathLike, option: str) -> Target:
    """Check that ``path`` can receive a file written by ``option``."""
    text = os.fspath(path)
    if text == "-":
        return Target("stdout", None, option)
    if not text:
        raise OutputError(f"{option}: empty path")
    if os.path.isdir(text) or text.endswith(os.sep):
        raise OutputError(f"{option}: {text!r} is a folder; expected a file")
    real = Path(os.path.realpath(text))
    try:   # the kernel follows the links (also /dev/stdout -> /proc/self/fd/1 -> pipe:[n])
        info = os.stat(text)
    except FileNotFoundError:
        _writable_folder(real.parent, option, creating=True)
        return Target("file", real, option)
    except OSError as exc:
        raise OutputError(f"{option}: cannot use {text!r}: {exc.strerror}") from None
    if _is_stdout(info):
        return Target("stdout", None, option)
    if stat.S_ISREG(info.st_mode):
        if not os.access(real, os.W_OK):
            raise OutputError(f"{option}: no write permission for {text!r}")
        _writable_folder(real.parent, option, creating=False)   # the atomic replace
        return Target("file", real, option)
    if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
        if not os.access(text, os.W_OK):
            raise OutputError(f"{option}: no write permission for {text!r}")
        if stat.S_ISCHR(info.st_mode):
            _probe_device(text, option)
        return Target("stream", Path(text), option)
    raise OutputError(f"{option}: {text!r} is not a file, pipe or device")


def output_folder(path: str | os.PathLike, option: str) -> Path:
    """Check that ``path`` is (or can be created as) a folder ``option`` may write into."""
    folder = Path(os.path.realpath(os.fspath(path)))
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{option}: {os.fspath(path)!r} is a file; expected a folder")
    _writable_folder(folder, option, creating=True)
    return folder


def _writable_folder(folder: Path, option: str, *, creating: bool) -> None:
    existing = folder
    if creating:   # the nearest existing ancestor must be a folder we may write into
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
    if not existing.exists():
        raise OutputError(f"{option}: folder {str(folder)!r} does not exist")
    if not existing.is_dir():
        raise OutputError(f"{option}: {str(existing)!r} is a file; expected a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".flbounds-probe-")
    except OSError as exc:
        raise OutputError(f"{option}: cannot write in folder {str(existing)!r}: "
                          f"{exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)


def _probe_device(text: str, option: str) -> None:
    """An empty write: nothing reaches a terminal or ``/dev/null``, but a device that
    refuses every write (``/dev/full``: no space left) says so now. (A pipe is not probed:
    opening one blocks until it has a reader.)"""
    try:
        fd = os.open(text, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise OutputError(f"{option}: cannot use {text!r}: {exc.strerror}") from None
    try:
        os.write(fd, b"")
    except BlockingIOError:
        pass
    except OSError as exc:
        raise OutputError(f"{option}: cannot write {text}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _is_stdout(info: os.stat_result) -> bool:
    try:
        out = os.fstat(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return (out.st_dev, out.st_ino) == (info.st_dev, info.st_ino)


def write_text(target: Target, text: str) -> None:
    """Write ``text`` to a checked target (see the module docstring)."""
    try:
        if target.kind == "stdout":
            sys.stdout.write(text)
            sys.stdout.flush()
        elif target.kind == "stream":
            with open(target.path, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            _replace(target.path, text.encode("utf-8"))
    except BrokenPipeError:
        raise
    except OSError as exc:
        where = "standard output" if target.path is None else str(target.path)
        raise OutputError(f"{target.option}: cannot write {where}: "
                          f"{exc.strerror or exc}") from None


def _replace(path: Path, data: bytes) -> None:
    """Atomic replace of a regular file (its mode kept, or the umask's for a new one)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
