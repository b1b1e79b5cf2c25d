"""Output files shared by generation, Label Studio and scoring; tables are read by
:func:`judge_transfer_audit.inputs.formats.read_frame`, the one table reader of every command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.output_files import check_output_file, check_output_folder, csv_text, write_file

Inputs = Iterable[str | os.PathLike | None]


def prepare_output(
    path: str | Path,
    role: str,
    *,
    directory: bool = False,
    inputs: Inputs = (),
    names: Iterable[str] = (),
    adopt: Iterable[str] = (),
) -> Path:
    """Check ``path`` can be written under the rules of :mod:`judge_transfer_audit.core.output_files` and create its
    folder.

    Called by the commands *before* any work, so a typo in ``-o`` (or an output that would
    replace an input) is an input error at once rather than a failure after hours of
    generation or scoring.

    Parameters
    ----------
    path : str or Path
        The output file (or directory).
    role : str
        What it is, for the message ("humans.csv", "output directory"...).
    directory : bool
        ``path`` is a directory to create, not a file.
    inputs : paths
        The command's input files: an output that is one of them (also through a link or a
        hard link) is refused.
    names : str
        With ``directory``: the files the command writes in it (checked like a file output,
        and refused when judge-audit did not write them:
        :func:`judge_transfer_audit.core.output_files.check_output_folder`).
    adopt : str
        With ``directory``: existing files the caller recognises as its own.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        The output is a symbolic link, one of ``inputs`` or a foreign file; the directory cannot
        be created (e.g. a file is in the way) or is not writable; a file path names a directory.
    """
    path = Path(path)
    if directory:
        check_output_folder(path, names, inputs, adopt=adopt)
    else:
        check_output_file(path, inputs)
    folder = path if directory else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        why = f"'{blocker}' is a file, not a folder" if blocker else (exc.strerror or str(exc))
        raise InputError(
            InputProblem(
                str(path),
                f"cannot create the folder for the {role}: {why}",
                fix="choose a path whose folders can be created",
            )
        ) from None
    if not directory and path.is_dir():
        raise InputError(InputProblem(str(path), f"the {role} path is a directory", fix="give a file name"))
    if not os.access(folder, os.W_OK):
        raise InputError(
            InputProblem(str(folder), f"the folder for the {role} is not writable", fix="choose a writable location")
        )
    return path


def check_writable_names(frame: pd.DataFrame, path: str | Path) -> None:
    """Refuse a table whose name columns hold a control character: every command reading it back
    would refuse it (:data:`judge_transfer_audit.inputs.layout.NAME_COLUMNS`), so it is not written at all.

    The callers check their sources first (a premise id, an annotator) and name the fix there;
    this is the rule every table written obeys, whatever it came from.
    """
    from judge_transfer_audit.inputs.layout import CONTROL, NAME_COLUMNS

    problems = []
    for column in frame.columns:
        if column not in NAME_COLUMNS:
            continue
        values = [v if isinstance(v, str) else "" for v in frame[column].tolist()]
        if not CONTROL.search("".join(values)):  # the common case: one scan per column
            continue
        for row, value in enumerate(values):
            if CONTROL.search(value):
                problems.append(
                    InputProblem(
                        str(path),
                        f"{column} {value!r} (row {row + 1}) holds a control character, which every command "
                        "reading the file back refuses",
                        fix=f"remove the control character from the {column} where it comes from",
                    )
                )
                break
    if problems:
        raise InputError(problems)


def write_text_file(path: str | Path, content: str | bytes, *, inputs: Inputs = ()) -> Path:
    """Write one output file with :func:`judge_transfer_audit.core.output_files.write_file` (atomic; never onto an
    input or through a link); an OS failure is an input error naming the file."""
    try:
        return write_file(path, content, inputs=inputs)
    except OSError as exc:
        raise InputError(
            InputProblem(str(path), f"cannot write: {exc.strerror or exc}", fix="choose a writable location")
        ) from None


def write_csv(frame: pd.DataFrame, path: str | Path, *, inputs: Inputs = ()) -> Path:
    """Write a UTF-8 CSV atomically (temporary file then rename), so a kill never leaves half a file.

    Formula cells are neutralised as in every CSV judge-audit writes
    (:func:`judge_transfer_audit.core.output_files.neutralise_cell`);
    :func:`judge_transfer_audit.inputs.formats.read_frame` (every command's table reader)
    undoes it, so stories.csv, pairs.csv, scores and humans.csv are read back exactly. A name
    holding a control character is refused (:func:`check_writable_names`). The file is never
    one of ``inputs`` nor a symbolic link (:func:`judge_transfer_audit.core.output_files.write_file`).

    Raises
    ------
    InputError
        The file cannot be written (see :func:`prepare_output`).
    """
    check_writable_names(frame, path)
    path = prepare_output(path, "output file", inputs=inputs)
    return write_text_file(path, csv_text(frame), inputs=inputs)
