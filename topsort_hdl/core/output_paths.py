"""Where the package writes: one rule for every output path, checked before any work.

A file or folder to write need not exist, nor the folders above it: they are created when it is
written. Refused, naming ``what`` (an option, or an argument of a function), the path and the
reason: a folder where a file is wanted, a file where a folder is wanted, a path under a file
(``records.bin/x.json`` where ``records.bin`` is a file), a folder that cannot be written in.
"""

import os
from pathlib import Path

__all__ = ["check_output_file", "check_output_folder"]


def _check_folders_above(what, path):
    """The nearest folder above ``path`` that exists is a folder we can create things in."""
    for folder in path.parents:
        if not folder.exists():     # (also under a file: the system says "not a directory")
            continue
        if not folder.is_dir():
            raise ValueError(f"{what} {path}: {folder} is a file, not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(f"{what} {path}: cannot write in folder {folder}")
        return


def check_output_file(what, path):
    """Return ``path`` as a :class:`~pathlib.Path` if a file can be written there, else raise
    ``ValueError`` (see the module's description)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{what} {path} is a folder, not a file")
    _check_folders_above(what, path)
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{what} {path}: cannot write it")
    return path


def check_output_folder(what, path):
    """Return ``path`` as a :class:`~pathlib.Path` if it is, or can be created as, a folder to
    write in, else raise ``ValueError`` (see the module's description)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} {path} is a file, not a folder")
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            raise ValueError(f"{what} {path}: cannot write in it")
        return path
    _check_folders_above(what, path)
    return path
