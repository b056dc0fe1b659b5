"""Which files of a documents folder are read: a sorted walk with include/exclude globs and symlink care.

Kept apart from reading and parsing because it is about the folder, not about any one file: hidden entries,
unsupported suffixes, symlink loops, broken links and two paths to one file are decided here, before a byte
of any document is read. Problems are recorded as (path, reason) pairs for the caller to report as warnings.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from goldset.kb.readers import FORMATS
from goldset.kb.settings import KBSettings


@dataclass(frozen=True)
class SourceFile:
    doc_id: str  # path relative to the KB root, POSIX separators
    path: Path


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    #: (relative path, reason) of files and folders left out, in walk order
    skipped: list[tuple[str, str]] = field(default_factory=list)
    unsupported: Counter[str] = field(default_factory=Counter)


def discover(root: Path, settings: KBSettings) -> Discovery:
    """Supported files under ``root``, sorted by path; hidden files and folders are left out.

    Symbolic links are followed; a link that leads back to one of its own parent folders (a loop), a broken
    link and a second path to an already listed file or folder are reported and skipped.
    """
    found = Discovery()
    root_real = root.resolve()
    _walk(root, PurePosixPath(), (str(root_real),), {str(root_real)}, {}, settings, found)
    found.files.sort(key=lambda f: f.doc_id)
    return found


def _walk(
    folder: Path,
    rel: PurePosixPath,
    ancestors: tuple[str, ...],
    seen_dirs: set[str],
    seen_files: dict[str, tuple[str, bool]],
    settings: KBSettings,
    found: Discovery,
) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        found.skipped.append((str(rel) if rel.parts else ".", f"cannot list folder ({exc.strerror}); skipped"))
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        rel_path = rel / entry.name
        doc_id = rel_path.as_posix()
        path = Path(entry.path)
        try:
            real = str(path.resolve(strict=True)) if entry.is_symlink() else str(path.absolute())
        except (OSError, RuntimeError) as exc:
            is_loop = isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40  # ELOOP
            reason = "symlink loop; skipped" if is_loop else "broken symlink (its target does not exist); skipped"
            found.skipped.append((doc_id, reason))
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=True)
            is_file = entry.is_file(follow_symlinks=True)
        except OSError as exc:
            found.skipped.append((doc_id, f"cannot read ({exc.strerror}); skipped"))
            continue
        if is_dir:
            if entry.is_symlink():
                real = str(Path(real).resolve())
            if real in ancestors:
                found.skipped.append((doc_id, "symlink loop (links back to a parent folder); skipped"))
                continue
            if real in seen_dirs:
                found.skipped.append((doc_id, "same folder as another path already read (symlink); skipped"))
                continue
            seen_dirs.add(real)
            _walk(path, rel_path, (*ancestors, real), seen_dirs, seen_files, settings, found)
        elif is_file:
            suffix = PurePosixPath(entry.name).suffix.lower()
            if suffix not in FORMATS:
                found.unsupported[suffix or "(no suffix)"] += 1
                continue
            if not _selected(doc_id, settings):
                continue
            is_link = entry.is_symlink()
            if is_link or real in seen_files:
                real = str(Path(real).resolve())
            if real in seen_files:
                first, first_is_link = seen_files[real]
                if first_is_link and not is_link:
                    # Two paths to one file: keep the real one, whichever the walk met first.
                    found.files = [f for f in found.files if f.doc_id != first]
                    found.skipped.append((first, f"same file as {doc_id} (symlink); skipped"))
                    seen_files[real] = (doc_id, is_link)
                    found.files.append(SourceFile(doc_id, path))
                else:
                    found.skipped.append((doc_id, f"same file as {first} (symlink); skipped"))
                continue
            seen_files[real] = (doc_id, is_link)
            found.files.append(SourceFile(doc_id, path))
        else:
            found.skipped.append((doc_id, "not a regular file; skipped"))


def _selected(doc_id: str, settings: KBSettings) -> bool:
    if settings.include and not any(fnmatch.fnmatchcase(doc_id, pat) for pat in settings.include):
        return False
    return not any(fnmatch.fnmatchcase(doc_id, pat) for pat in settings.exclude)
