"""Output files shared by generation, Label Studio and scoring; tables are read by
:func:`audit.inputs.formats.read_frame`, the one table reader of every command."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from audit.errors import InputError, InputProblem
from audit.output_files import spreadsheet_safe


def prepare_output(path: str | Path, role: str, *, directory: bool = False) -> Path:
    """Create what ``path`` needs (its parent, or itself with ``directory``) and check it is writable.

    Called by the commands *before* any work, so a typo in ``-o`` is an input error at once
    rather than a failure after hours of generation or scoring.

    Parameters
    ----------
    path : str or Path
        The output file (or directory).
    role : str
        What it is, for the message ("humans.csv", "output directory"...).
    directory : bool
        ``path`` is a directory to create, not a file.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        The directory cannot be created (e.g. a file is in the way), is not writable, or
        a file path names an existing directory.
    """
    path = Path(path)
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


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a UTF-8 CSV atomically (temporary file then rename), so a kill never leaves half a file.

    Formula cells are neutralised as in every CSV judge-audit writes
    (:func:`audit.output_files.neutralise_cell`); :func:`audit.inputs.formats.read_frame` (every command's table reader)
    undoes it, so stories.csv, pairs.csv, scores and humans.csv are read back exactly.

    Raises
    ------
    InputError
        The file cannot be written (see :func:`prepare_output`).
    """
    path = prepare_output(path, "output file")
    tmp = path.with_name(path.name + ".tmp")
    try:
        spreadsheet_safe(frame).to_csv(tmp, index=False)
        tmp.replace(path)
    except OSError as exc:
        raise InputError(
            InputProblem(str(path), f"cannot write: {exc.strerror or exc}", fix="choose a writable location")
        ) from None
    return path
