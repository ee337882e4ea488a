"""Every file repltool writes, and every side input it reads, goes through here.

Outputs are never destructive:

* an output path that is one of the inputs - the same file, a symbolic or a
  hard link to it (same ``st_dev``/``st_ino``) - is refused, even with
  ``force``;
* an existing output is refused unless ``force`` is given; even then it is
  *replaced* (a new inode renamed over it), never written through, so a
  symbolic link is replaced by a file and not followed;
* a file is written to a temporary name in its own directory, flushed,
  ``fsync``\\ ed and renamed over the target (:func:`atomic_path`,
  :func:`write_file`).  The file gets mode ``0666 & ~umask`` (0644 under
  the usual umask), not ``mkstemp``'s 0600;
* a set of files (``certify --output``, ``synth -o``, ``sample -o``) is
  written into a staging directory inside the output directory and renamed
  into place only when every file is complete (:class:`OutputSet`).  The
  renames are all-or-nothing: when one fails, the files already replaced are
  restored from hard links kept in the staging directory.  The staging
  directory is named ``.repltool-staging-PID-XXXX``; it is removed on any
  error, on Ctrl-C and on SIGTERM (see :func:`sigterm_raises`); a later run
  that finds one whose process is gone removes it (and says so).

I/O failures become :class:`~repltool.errors.IOFailure` (exit status 8):
one line naming the file and the system's reason.

Side inputs (``--schema``, ``--writesets``, ``--cost csv:``, configuration
files) are read by :func:`read_text_bounded`: regular files only (a FIFO or
``/dev/zero`` is refused before it is opened for reading), at most a size
limit, valid UTF-8 or a one-line error naming the file.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError, IOFailure, UsageError

StrPath = str | os.PathLike[str]

STAGING_PREFIX = ".repltool-staging-"
#: Staging directories of older versions (no process id in the name).
LEGACY_STAGING_PREFIXES = (".repltool-certify-",)

#: Default size limit of a side input (schema, write sets, cost table, config).
SIDE_INPUT_LIMIT = 256 << 20


class Terminated(BaseException):
    """SIGTERM arrived (raised by the handler :func:`sigterm_raises` installs).

    A ``BaseException`` like ``KeyboardInterrupt``: ``finally`` blocks run and
    remove partial outputs; the command line reports it and exits 143.
    """


# ---------------------------------------------------------------- signals

_critical = 0
_pending: list[int] = []


def _on_sigterm(signum: int, frame: object) -> None:
    if _critical:
        _pending.append(signum)         # raised when the renames are done
        return
    raise Terminated()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While active, SIGTERM raises :class:`Terminated` (main thread only; else a no-op)."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _uninterrupted() -> Iterator[None]:
    """Defer SIGTERM and SIGINT while a set of renames (or its roll-back) runs."""
    global _critical
    import threading
    main = threading.current_thread() is threading.main_thread()
    old_int = signal.getsignal(signal.SIGINT) if main else None
    if main:
        signal.signal(signal.SIGINT, lambda s, f: _pending.append(s))
    _critical += 1
    try:
        yield
    finally:
        _critical -= 1
        if main:
            signal.signal(signal.SIGINT, old_int)
        if not _critical and _pending:
            signums = list(_pending)
            _pending.clear()
            if signal.SIGINT in signums:
                raise KeyboardInterrupt
            raise Terminated()


# ---------------------------------------------------------------- checks

def _io_error(what: str, exc: OSError) -> IOFailure:
    return IOFailure(f"{what}: {exc.strerror or exc}")


def _stat(path: StrPath) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def input_ids(inputs: Iterable[StrPath]) -> dict[tuple[int, int], str]:
    """``(st_dev, st_ino)`` of every input that exists -> its name."""
    ids: dict[tuple[int, int], str] = {}
    for p in inputs:
        st = _stat(p)
        if st is not None:
            ids.setdefault((st.st_dev, st.st_ino), os.fspath(p))
    return ids


def check_output(path: StrPath, inputs: Iterable[StrPath] = (), *, force: bool = False,
                 option: str = "output") -> Path:
    """Refuse ``path`` as an output when it is an input, or exists and ``force`` is off.

    :param option: how the message names the option (``--junit``, ``-o``...).
    :raises UsageError: the refusal, one line.
    """
    target = Path(path)
    ids = inputs if isinstance(inputs, dict) else input_ids(inputs)
    st = _stat(target)
    if st is not None and (st.st_dev, st.st_ino) in ids:
        same = ids[(st.st_dev, st.st_ino)]
        how = ("is" if os.path.abspath(same) == os.path.abspath(target)
               else "is a link to" if os.path.islink(target) else "is the same file as")
        raise UsageError(f"{option} {target}: {how} the input {same}; an output never "
                         "replaces an input")
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{option} {target}: is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a device or FIFO (/dev/full, /dev/null): never replaced, also not with --force
        raise UsageError(f"{option} {target}: is not a regular file; write to a file")
    if os.path.lexists(target) and not force:
        kind = "a symbolic link" if os.path.islink(target) else "file"
        raise UsageError(f"{option} {target}: {kind} exists; --force replaces it")
    return target


def check_directory(directory: StrPath, *, option: str = "output") -> Path:
    """``directory`` is a directory or does not exist yet (it is created on write)."""
    d = Path(directory)
    if os.path.exists(d) and not d.is_dir():
        raise UsageError(f"{option} {d}: not a directory")
    return d


def _make_dir(d: Path, option: str) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _io_error(f"{option} {d}: cannot create the directory", exc) from None


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_dir(d: StrPath) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------- one file

@contextmanager
def atomic_path(path: StrPath, inputs: Iterable[StrPath] = (), *, force: bool = False,
                option: str = "output") -> Iterator[str]:
    """Yield a temporary path next to ``path``; rename it over ``path`` on success.

    For writers that want a file name (Graphviz's ``dot -o``, matplotlib's
    ``savefig``).  The temporary file exists (empty, mode ``0666 & ~umask``)
    and keeps the target's suffix.  On any exception it is removed and
    ``path`` is untouched.

    :raises UsageError: as :func:`check_output`.
    :raises IOFailure: when the file cannot be created, written or renamed.
    """
    target = check_output(path, inputs, force=force, option=option)
    directory = target.parent
    tmp = directory / f".{target.stem}.repltool-{os.urandom(4).hex()}{target.suffix}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise _io_error(f"{option} {target}: cannot create a file in {directory}", exc) from None
    os.close(fd)
    try:
        yield str(tmp)
        try:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except OSError as exc:
            raise _io_error(f"{option} {target}", exc) from None
        _fsync_dir(directory)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def write_file(path: StrPath, data: bytes | str, inputs: Iterable[StrPath] = (), *,
               force: bool = False, option: str = "output") -> Path:
    """Write ``data`` (str: UTF-8) to ``path`` atomically; see :func:`atomic_path`.

    A ``str`` holding lone surrogates (a file name that is not UTF-8) is
    written with backslash escapes instead of failing.
    """
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    with atomic_path(path, inputs, force=force, option=option) as tmp:
        try:
            with open(tmp, "wb") as fh:
                fh.write(raw)
        except OSError as exc:
            raise _io_error(f"{option} {path}", exc) from None
    return Path(path)


# ---------------------------------------------------------------- a set of files

class OutputSet:
    """Files written into a staging directory and renamed into ``directory`` together.

    Usage::

        with OutputSet(out, inputs=files, force=force, option="--output") as s:
            for f in files:
                write_copy(f, s.stage(Path(f).name))
            s.commit()

    Leaving the block without :meth:`commit` (an exception, Ctrl-C,
    SIGTERM under :func:`sigterm_raises`) removes the staging directory
    and leaves ``directory`` as it was.  :meth:`commit` renames in the
    order the files were staged; if a rename fails, the targets already
    replaced get their old contents back (or are removed when they did
    not exist) and :class:`IOFailure` is raised.

    :param names: file names known before the run: checked at once (an
        input, or an existing file without ``force``, is refused before
        anything is read or written).  :meth:`stage` checks later names.
    """

    def __init__(self, directory: StrPath, names: Iterable[str] = (),
                 inputs: Iterable[StrPath] = (), *, force: bool = False,
                 option: str = "output") -> None:
        self.directory = check_directory(directory, option=option)
        self.force = force
        self.option = option
        self._ids = input_ids(inputs)
        self._staged: list[str] = []
        self._created = False
        self.staging: Path | None = None
        self.removed_stale: list[Path] = []
        for name in names:
            self._check(name)

    def _check(self, name: str) -> Path:
        if os.sep in name or name in ("", ".", ".."):
            raise UsageError(f"{self.option}: bad output file name {name!r}")
        return check_output(self.directory / name, self._ids, force=self.force,
                            option=self.option)

    def __enter__(self) -> OutputSet:
        self._created = not os.path.isdir(self.directory)
        _make_dir(self.directory, self.option)
        self.removed_stale = remove_stale_staging(self.directory)
        staging = self.directory / f"{STAGING_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
        try:
            # a signal between creating the directory and recording it would leave it
            # behind (__exit__ does not run when __enter__ raises): deferred past both,
            # then the directory is removed as any interrupted run's
            with _uninterrupted():
                os.mkdir(staging, 0o700)
                self.staging = staging
        except OSError as exc:
            if self._created:
                try:
                    os.rmdir(self.directory)
                except OSError:
                    pass
            raise _io_error(f"{self.option} {self.directory}: cannot create a staging "
                            "directory", exc) from None
        except BaseException:
            self.discard()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.discard()

    def stage(self, name: str) -> Path:
        """The path to write ``name`` to (in the staging directory)."""
        assert self.staging is not None, "use OutputSet as a context manager"
        self._check(name)
        if name not in self._staged:
            self._staged.append(name)
        return self.staging / name

    def discard(self) -> None:
        """Remove the staging directory (and the output directory if this set created it
        and it is still empty)."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
            if self._created:
                try:
                    os.rmdir(self.directory)
                except OSError:
                    pass

    def commit(self) -> list[Path]:
        """Rename every staged file into the directory, all or none; return the final paths."""
        assert self.staging is not None
        staging = self.staging
        backups = staging / ".previous"
        mode = _file_mode()
        try:
            for name in self._staged:
                os.chmod(staging / name, mode)
                with open(staging / name, "rb") as fh:
                    os.fsync(fh.fileno())
            os.mkdir(backups, 0o700)
        except OSError as exc:
            raise _io_error(f"{self.option} {self.directory}", exc) from None
        done: list[tuple[str, bool]] = []         # (name, had a previous file)
        with _uninterrupted():
            try:
                for name in self._staged:
                    final = self.directory / name
                    self._check(name)             # nothing became an input meanwhile
                    had = os.path.lexists(final)
                    if had:
                        _keep(final, backups / name)
                    os.replace(staging / name, final)
                    done.append((name, had))
            except (OSError, UsageError) as exc:
                failed = self._restore(done, backups)
                what = (exc.reason if isinstance(exc, UsageError)
                        else f"{self.option} {self.directory}: cannot rename "
                             f"{name}: {exc.strerror or exc}")
                note = ("; the files already renamed were restored" if not failed else
                        f"; could not restore {', '.join(failed)} (copies in {backups})")
                if failed:
                    self.staging = None           # keep the backups for the user
                raise IOFailure(what + note) from None
            _fsync_dir(self.directory)
        self._created = False
        return [self.directory / n for n in self._staged]

    def _restore(self, done: list[tuple[str, bool]], backups: Path) -> list[str]:
        failed = []
        for name, had in reversed(done):
            final = self.directory / name
            try:
                if had:
                    os.replace(backups / name, final)
                else:
                    os.unlink(final)
            except OSError:
                failed.append(name)
        return failed


def _keep(final: Path, backup: Path) -> None:
    """A second name for ``final``'s current contents (a hard link, else a copy)."""
    try:
        os.link(final, backup, follow_symlinks=False)
    except OSError:
        if os.path.islink(final):
            os.symlink(os.readlink(final), backup)
        else:
            shutil.copy2(final, backup)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_stale_staging(directory: StrPath) -> list[Path]:
    """Remove staging directories of runs that are gone; return what was removed.

    ``.repltool-staging-PID-...`` whose process no longer exists is removed;
    one of an older repltool (no process id) is only named in a warning.
    """
    import warnings
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for e in entries:
        if not e.is_dir(follow_symlinks=False):
            continue
        if e.name.startswith(STAGING_PREFIX):
            pid_text = e.name[len(STAGING_PREFIX):].split("-", 1)[0]
            if pid_text.isdigit() and (int(pid_text) == os.getpid() or _alive(int(pid_text))):
                continue
            shutil.rmtree(e.path, ignore_errors=True)
            removed.append(Path(e.path))
            warnings.warn(f"removed {e.path}: the staging directory of an interrupted run",
                          stacklevel=2)
        elif e.name.startswith(LEGACY_STAGING_PREFIXES):
            warnings.warn(f"{e.path} is the staging directory of an interrupted run of an "
                          "older repltool (not a complete output): remove it", stacklevel=2)
    return removed


# ---------------------------------------------------------------- side inputs

def open_regular(path: StrPath, what: str = "") -> int:
    """Open ``path`` for reading without blocking; refuse what is not a regular file.

    A FIFO with no writer would block ``open``, ``/dev/zero`` never ends and
    a pipe cannot be re-read: all are refused with one line.  Returns a
    blocking file descriptor.

    :raises InputError: missing, unreadable, a directory, or not a regular file.
    """
    p = os.fspath(path)
    label = f"{what} {p}" if what else p
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except IsADirectoryError:
        raise InputError(f"{label}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot open: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{label}: is a directory")
        kind = ("is a pipe or FIFO" if stat.S_ISFIFO(st.st_mode) else
                "is a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "is a socket" if stat.S_ISSOCK(st.st_mode) else "is not a regular file")
        raise InputError(f"{label}: {kind}, not a regular file; repltool reads files "
                         "(save a stream to a file first)")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def read_bytes_bounded(path: StrPath, limit: int = SIDE_INPUT_LIMIT, what: str = "") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    :raises InputError: as :func:`open_regular`, when the file is larger
        than ``limit``, or when reading fails.
    """
    p = os.fspath(path)
    label = f"{what} {p}" if what else p
    fd = open_regular(p, what)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise InputError(f"{label}: {size} bytes, more than the {_human(limit)} "
                             "repltool reads from such a file")
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputError(f"{label}: grew beyond {_human(limit)} while being read")
    return data


def read_text_bounded(path: StrPath, limit: int = SIDE_INPUT_LIMIT, what: str = "") -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (a BOM is dropped).

    :raises InputError: as :func:`read_bytes_bounded`, or when the bytes are
        not UTF-8 (the message gives the offset).
    """
    data = read_bytes_bounded(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        label = f"{what} {os.fspath(path)}" if what else os.fspath(path)
        raise InputError(f"{label}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start})") from None


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def describe_oserror(exc: OSError) -> str:
    """``FILE: reason`` (or just the reason) for an :class:`OSError`."""
    reason = exc.strerror or errno.errorcode.get(exc.errno or 0, "") or str(exc)
    name = exc.filename
    if name is not None:
        return f"{os.fsdecode(name) if isinstance(name, bytes) else name}: {reason}"
    return reason


def stdout_works() -> bool:
    """Whether flushing standard output succeeds (used to blame an I/O error on it)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        return False
    return True
