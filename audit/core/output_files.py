"""Every file judge-audit writes goes through here: atomic, never onto an input, never through a link.

Rules (README "Reliability"):

* **Atomic.** A file is written to a temporary file in the same folder
  (``.judge-audit-tmp-*``), flushed to disk, then renamed over the target with
  ``os.replace``. A run killed at any moment leaves each file either as it was or complete;
  an output folder's files are all written to their temporary files before the first one is
  replaced. A large file (result.json) is encoded straight into its temporary file, a piece at a
  time (:data:`TextWriter`), so that its whole text is never held.
* **Inputs are never touched.** A target that *is* one of the run's input files (same
  file, also through a link or a hard link) is refused with exit status 2, naming both.
* **Links are never followed or replaced.** A target that is a symbolic link is refused.
* **Only our own files are replaced or cleaned.** An output folder holds a manifest,
  ``.judge-audit-manifest.json``: the name and sha256 of every file the last run wrote.
  A file at an output name that the manifest does not list (the user's own ``cells.csv``)
  is refused rather than overwritten. A file of the last run that this run does not write
  (a section now skipped) is removed only if it is still byte-identical to what was written;
  a file edited since is kept and reported.
* **CSV cells cannot run as spreadsheet formulas.** :func:`csv_text` neutralises them (see
  :func:`neutralise_cell`); JSON keeps every raw value. The rule is reversible and every CSV
  reader of judge-audit (the audit's loader, generation/, Label Studio) undoes it
  (:func:`restore_cell`), so ``audit generate``'s stories.csv is read back exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Union

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem

MANIFEST = ".judge-audit-manifest.json"
TEMP_PREFIX = ".judge-audit-tmp-"

#: A file's text given as a function that hands it to ``write`` piece by piece (joined, the pieces are the text);
#: it is encoded to UTF-8 and written as it comes, e.g.
#: ``functools.partial(judge_transfer_audit.results.result.write_result_json, result, end="\\n")``.
TextWriter = Callable[[Callable[[str], Any]], None]
#: What a file is given as: its text, its bytes, or a :data:`TextWriter`.
Content = Union[str, bytes, TextWriter]

# --------------------------------------------------------------------------- CSV cells
#: A cell starting with one of these is read as a formula by Excel, LibreOffice or Sheets.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_MAYBE_FORMULA = FORMULA_STARTS + ("'",)  #: what a cell :func:`neutralise_cell` changes starts with
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _is_formula(value: str) -> bool:
    """Would a spreadsheet evaluate ``value`` once our ``'`` marks are taken off?"""
    bare = value.lstrip("'")
    return bare.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(bare)


def neutralise_cell(value: object) -> object:
    """A text cell that a spreadsheet would evaluate, prefixed with ``'`` so it is shown as text.

    Text starting with ``= + - @``, a tab or a carriage return gets a leading apostrophe
    (``=HYPERLINK(...)`` -> ``'=HYPERLINK(...)``); a plain number written as text
    (``-0.5``, ``+3``, ``-1e-05``) is left alone, and so is every non-text value. Text that
    already starts with apostrophes before such a character (``'=x``) gets one more, so
    :func:`restore_cell` gives back exactly what was written: the rule is reversible.
    """
    if isinstance(value, str) and _is_formula(value):
        return "'" + value
    return value


def restore_cell(value: object) -> object:
    """The inverse of :func:`neutralise_cell`: ``'=x`` -> ``=x``, ``''=x`` -> ``'=x``; any other
    value (``'quoted``, ``'-0.5``, numbers) unchanged. ``restore_cell(neutralise_cell(v)) == v``."""
    if isinstance(value, str) and value.startswith("'") and _is_formula(value):
        return value[1:]
    return value


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`restore_cell` over every text cell and column name of a table read from CSV/TSV
    (the tables judge-audit writes, e.g. ``audit generate``'s stories.csv, are read back as
    they were before neutralising). Only columns holding a leading ``'`` are touched."""
    out = frame
    for column in frame.columns:
        col = frame[column]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        if pd.api.types.is_string_dtype(col):  # vectorised: the loader reads a million votes
            marked = col.str.startswith("'", na=False).astype(bool)
        else:
            marked = col.map(lambda v: isinstance(v, str) and v.startswith("'")).astype(bool)
        if marked.any():
            if out is frame:
                out = frame.copy()
            out.loc[marked, column] = col[marked].map(restore_cell)
    names = [restore_cell(str(c)) for c in out.columns]
    if names != [str(c) for c in out.columns]:
        out = out.copy() if out is frame else out
        out.columns = names
    return out


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names pass through :func:`neutralise_cell`."""
    safe = frame.copy()
    for k in range(safe.shape[1]):
        col = safe.iloc[:, k]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        if isinstance(col.dtype, pd.StringDtype):
            # only text starting with a formula character or an apostrophe can change: a vectorised
            # filter first (a million-vote table), the rule on those cells alone
            maybe = col.str.startswith(_MAYBE_FORMULA, na=False).to_numpy(bool)
            if maybe.any():
                col = col.copy()
                col[maybe] = col[maybe].map(neutralise_cell)
                safe.isetitem(k, col)
            continue
        safe.isetitem(k, col.map(neutralise_cell, na_action="ignore"))
    safe.columns = [neutralise_cell(str(c)) for c in safe.columns]
    return safe


def csv_text(frame: pd.DataFrame) -> str:
    """The CSV every judge-audit table is written as: no index, formula cells neutralised."""
    return spreadsheet_safe(frame).to_csv(index=False)


# --------------------------------------------------------------------------- guards
def _input_paths(inputs: Iterable[str | os.PathLike | None]) -> list[tuple[str, Path]]:
    return [(str(p), Path(p)) for p in inputs if p is not None]


def _same_file(a: Path, b: Path) -> bool:
    """Same file on disk (links and hard links included), or the same path once resolved."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:  # one of them does not exist (or cannot be stat'ed)
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def _target_problems(target: Path, inputs: list[tuple[str, Path]]) -> list[InputProblem]:
    problems = []
    if target.is_symlink():
        problems.append(
            InputProblem(
                str(target),
                f"the output path is a symbolic link (to {os.readlink(target)}); judge-audit never "
                "writes through or replaces a link",
                fix="remove the link or choose another output location",
            )
        )
        return problems
    if target.is_dir():
        problems.append(
            InputProblem(
                str(target),
                "the output path is a folder",
                fix="remove or rename that folder, or choose another output location",
            )
        )
    for given, path in inputs:
        if _same_file(target, path):
            problems.append(
                InputProblem(
                    str(target),
                    f"writing this output would overwrite the input file {given}",
                    fix="choose an output location that holds none of the run's inputs (e.g. a new --out folder)",
                )
            )
    return problems


def _unwritable(folder: Path, what: str) -> InputProblem | None:
    """A problem when nothing can be written in ``folder`` (or, when it does not exist yet, in the
    nearest folder above it that does): a file in the way, no permission, a read-only file system.

    Probed by creating and removing a temporary file there, the one test that holds for every user
    (root included) and file system; nothing is left behind and no folder is created.
    """
    existing = folder
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    fix = "choose a location you can write to"
    if not existing.is_dir():
        return InputProblem(str(folder), f"cannot create the {what}: {existing} is a file, not a folder", fix=fix)
    try:
        fd, probe = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=existing)
    except OSError as exc:
        return InputProblem(str(folder), f"cannot write in {existing}: {exc.strerror or exc}", fix=fix)
    os.close(fd)
    os.unlink(probe)
    return None


def check_output_file(path: str | os.PathLike, inputs: Iterable[str | os.PathLike | None] = ()) -> Path:
    """Refuse (``InputError``) a target that is a link, a folder or one of ``inputs``, or whose folder
    cannot be written; return it."""
    target = Path(path)
    problems = _target_problems(target, _input_paths(inputs))
    if not problems:
        problems = [p for p in [_unwritable(target.parent, "folder of the output")] if p]
    if problems:
        raise InputError(problems)
    return target


# --------------------------------------------------------------------------- atomic writes
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: characters of a text encoded at a time when it is hashed or written, so that no encoded copy of a whole
#: large file (a million votes' result.json is about a gigabyte) is made beside the text
_TEXT_SLICE = 1 << 24


def _utf8_slices(content: str | bytes) -> Iterator[bytes]:
    """``content`` as UTF-8 bytes, :data:`_TEXT_SLICE` characters at a time (bytes as they are); joined, the
    slices are ``content.encode("utf-8")``."""
    if isinstance(content, bytes):
        yield content
        return
    for start in range(0, len(content), _TEXT_SLICE):
        yield content[start : start + _TEXT_SLICE].encode("utf-8")


def _write_temp(folder: Path, name: str, content: Content) -> tuple[Path, str]:
    """``content`` written to a new temporary file in ``folder`` and flushed to disk; its path and the SHA-256
    of the bytes written. The temporary file is removed if anything fails (a :data:`TextWriter` raising midway
    included)."""
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=f"-{name}", dir=folder)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as handle:

            def write(data: bytes) -> None:
                digest.update(data)
                handle.write(data)

            if callable(content):
                content(lambda text: write(text.encode("utf-8")))
            else:
                for data in _utf8_slices(content):
                    write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp), digest.hexdigest()


def write_file(path: str | os.PathLike, content: Content, *, inputs: Iterable[str | os.PathLike | None] = ()) -> Path:
    """Write one file the user named (``-o report.html``) atomically; refuse links and inputs.

    The parent folder is created. Returns the path written.
    """
    target = check_output_file(path, inputs)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp, _ = _write_temp(target.parent, target.name, content)
    try:
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


# --------------------------------------------------------------------------- output folders
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\x00" not in name


@dataclass(frozen=True)
class ManifestEntry:
    """One file the manifest says judge-audit wrote: its digest and the command that wrote it."""

    sha256: str
    command: str


def read_manifest(folder: Path) -> dict[str, ManifestEntry]:
    """name -> entry of the files judge-audit wrote into ``folder`` ({} when there is no manifest)."""
    path = folder / MANIFEST
    if not path.exists() and not path.is_symlink():
        return {}
    fix = f"delete {path} (judge-audit then treats every file in the folder as yours and replaces none of them)"
    if path.is_symlink():
        raise InputError(InputProblem(str(path), "the manifest is a symbolic link", fix=fix))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("tool") != "judge-audit" or not isinstance(files, dict):
            raise ValueError("not a judge-audit manifest")
        entries = {}
        for name, entry in files.items():
            if not (
                _plain_name(name)
                and isinstance(entry, dict)
                and isinstance(entry.get("sha256"), str)
                and isinstance(entry.get("command"), str)
            ):
                raise ValueError(f"entry {name!r} is not a file name with its sha256 and command")
            entries[name] = ManifestEntry(entry["sha256"], entry["command"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(InputProblem(str(path), f"cannot read the output manifest: {exc}", fix=fix)) from None
    return entries


def _write_manifest(folder: Path, entries: Mapping[str, ManifestEntry]) -> None:
    files = {name: {"sha256": e.sha256, "command": e.command} for name, e in sorted(entries.items())}
    manifest = {"tool": "judge-audit", "version": 1, "files": files}
    os.replace(_write_temp(folder, MANIFEST, json.dumps(manifest, indent=1) + "\n")[0], folder / MANIFEST)


@dataclass(frozen=True)
class FolderWrite:
    """What :func:`write_folder` did.

    Attributes
    ----------
    paths : dict[str, Path]
        File name -> path of every file written.
    removed : tuple[str, ...]
        Files the same command wrote last time and does not write now (a section now
        skipped), removed because they were unchanged since.
    kept : tuple[str, ...]
        Such files kept because they changed since judge-audit wrote them (or became an
        input): the caller says so.
    """

    paths: dict[str, Path]
    removed: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


def check_output_folder(
    folder: str | os.PathLike,
    names: Iterable[str],
    inputs: Iterable[str | os.PathLike | None] = (),
    *,
    adopt: Iterable[str] = (),
) -> None:
    """Refuse, before any work, an output folder where writing ``names`` would break a rule.

    Raises :class:`~judge_transfer_audit.core.errors.InputError` when a target is a link, a folder, one of
    ``inputs``, or an existing file the folder's manifest does not list (unless in ``adopt``:
    files the caller recognises as judge-audit's own from before manifests existed).
    """
    out = Path(folder)
    if out.is_symlink() and not out.exists():
        raise InputError(
            InputProblem(
                str(out), "the output folder is a broken symbolic link", fix="remove the link or choose another --out"
            )
        )
    if out.exists() and not out.is_dir():
        raise InputError(
            InputProblem(
                str(out), "the output folder is a file", fix="give --out a folder (new or written by judge-audit)"
            )
        )
    unwritable = _unwritable(out, "output folder")
    if unwritable:
        raise InputError(unwritable)
    if not out.exists():
        return
    sources = _input_paths(inputs)
    owned = set(read_manifest(out)) | set(adopt)
    problems: list[InputProblem] = []
    foreign = []
    for name in (*names, MANIFEST):
        target = out / name
        found = _target_problems(target, sources)
        problems.extend(found)
        if not found and name != MANIFEST and target.exists() and name not in owned:
            foreign.append(name)
    if foreign:
        problems.append(
            InputProblem(
                str(out),
                f"{len(foreign)} file(s) that judge-audit did not write are in the way (not listed in "
                f"{MANIFEST}): {', '.join(foreign)}",
                fix="move them elsewhere, or choose another output folder; judge-audit never overwrites a file it did "
                "not write",
            )
        )
    if problems:
        raise InputError(problems)


class OutputFolder:
    """An output folder written under the rules of this module, one file at a time.

    Entering checks the folder (as :func:`check_output_folder`, for ``may_write``) and removes the temporary
    files of a run killed mid-write; :meth:`add` writes a file to its temporary file at once (a
    :data:`TextWriter` is encoded straight into it, so its text is never held whole); :meth:`commit` claims
    the names in the manifest, renames every temporary file over its target and removes the stale files of
    the same command. Leaving the ``with`` block without committing (an error while rendering or writing a
    file) removes the temporary files: every target stays as it was.

    Parameters are those of :func:`write_folder` (``may_write``: every name that may be added; a name outside
    it is checked when added).

    Examples
    --------
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> with OutputFolder(out, command="example", may_write=["a.txt", "b.txt"]) as folder:
    ...     folder.add("a.txt", "one\\n")
    ...     folder.add("b.txt", lambda write: [write("t"), write("wo\\n")])
    ...     written = folder.commit()
    >>> sorted(written.paths), open(written.paths["b.txt"]).read()
    (['a.txt', 'b.txt'], 'two\\n')
    """

    def __init__(
        self,
        folder: str | os.PathLike,
        *,
        command: str,
        inputs: Iterable[str | os.PathLike | None] = (),
        may_write: Iterable[str] = (),
        adopt: Iterable[str] = (),
        clean: bool = True,
    ):
        self.folder, self.command, self.clean = Path(folder), command, clean
        self._inputs, self._adopt, self._checked = list(inputs), tuple(adopt), set(may_write)
        self._previous: dict[str, ManifestEntry] = {}
        self._written: dict[str, ManifestEntry] = {}
        self._temps: dict[str, Path] = {}

    def __enter__(self) -> OutputFolder:
        out = self.folder
        check_output_folder(out, sorted(self._checked), self._inputs, adopt=self._adopt)
        out.mkdir(parents=True, exist_ok=True)
        self._previous = read_manifest(out)
        for leftover in out.glob(f"{TEMP_PREFIX}*"):  # from a run killed mid-write; the name is ours
            if leftover.is_file() and not leftover.is_symlink():
                leftover.unlink(missing_ok=True)
        return self

    def add(self, name: str, content: Content) -> None:
        """Write ``content`` to the temporary file of ``name`` (replacing an earlier one of the same name)."""
        if name not in self._checked:
            check_output_folder(self.folder, [name], self._inputs, adopt=self._adopt)
            self._checked.add(name)
        if name in self._temps:
            self._temps.pop(name).unlink(missing_ok=True)
        tmp, sha256 = _write_temp(self.folder, name, content)
        self._temps[name], self._written[name] = tmp, ManifestEntry(sha256, self.command)

    def commit(self) -> FolderWrite:
        """Put every added file in place and tidy the folder; what was done."""
        out, previous, written = self.folder, self._previous, self._written
        # Claim the new names before the first rename, so a run killed between two renames
        # leaves a folder the next run still recognises as its own.
        _write_manifest(out, {**previous, **written})
        while self._temps:
            name, tmp = next(iter(self._temps.items()))
            os.replace(tmp, out / name)
            del self._temps[name]
        removed, kept = [], []
        resolved = _input_paths(self._inputs)
        entries = dict(previous)
        for name, entry in previous.items() if self.clean else ():
            target = out / name
            if name in written:
                continue
            if not target.exists() or target.is_symlink():
                entries.pop(name)  # gone (or replaced by the user's link): no longer ours
                continue
            if entry.command != self.command:
                continue  # another command's file: not this run's to judge
            unchanged = target.is_file() and _sha256(target.read_bytes()) == entry.sha256
            if unchanged and not any(_same_file(target, p) for _, p in resolved):
                target.unlink()
                removed.append(name)
            else:
                kept.append(name)
            entries.pop(name)
        _write_manifest(out, {**entries, **written})
        return FolderWrite({name: out / name for name in written}, tuple(removed), tuple(kept))

    def __exit__(self, *exc) -> None:
        for tmp in self._temps.values():
            tmp.unlink(missing_ok=True)
        self._temps.clear()


def write_folder(
    folder: str | os.PathLike,
    files: Mapping[str, Content],
    *,
    command: str,
    inputs: Iterable[str | os.PathLike | None] = (),
    may_write: Iterable[str] = (),
    adopt: Iterable[str] = (),
    clean: bool = True,
) -> FolderWrite:
    """Write ``files`` (name -> content) into ``folder`` under the rules of this module.

    Parameters
    ----------
    folder : path
        Created if needed.
    files : mapping
        Every file of this run: its text, bytes or :data:`TextWriter`.
    command : str
        The command writing (``"run"``, ``"reliability"``, ...): a run only ever removes
        stale files that the same command wrote, so two commands can share a folder.
    inputs : paths
        The run's input files; none of them is ever written or removed.
    may_write : names
        Every name a run of this kind can write (checked like ``files``), so a conflict is
        found whatever this run happens to skip.
    adopt : names
        Existing files to treat as judge-audit's own although no manifest lists them (see
        :func:`check_output_folder`); they are replaced when written, never removed.
    clean : bool
        Remove the stale files of the same command (default); ``False`` when a command writes
        its folder in several steps (``audit generate``: run.json first, the tables at the end).
    """
    names = set(files) | set(may_write)
    with OutputFolder(folder, command=command, inputs=inputs, may_write=names, adopt=adopt, clean=clean) as out:
        for name, content in files.items():
            out.add(name, content)
        return out.commit()


__all__ = [
    "FORMULA_STARTS",
    "MANIFEST",
    "Content",
    "FolderWrite",
    "ManifestEntry",
    "OutputFolder",
    "TextWriter",
    "check_output_file",
    "check_output_folder",
    "csv_text",
    "neutralise_cell",
    "read_manifest",
    "restore_cell",
    "restore_frame",
    "spreadsheet_safe",
    "write_file",
    "write_folder",
]
