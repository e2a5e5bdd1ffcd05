"""Collecting a submission: unpack it safely and find the student files in it.

A submission is a folder, a .zip, a .tar.gz/.tgz/.tar, or a whole copy of the handout.
Archives are unpacked into a private folder, member by member, refusing absolute paths,
`..`, links and device files, and stopping at the rubric's size and count limits
(zip bombs: the bytes actually written are counted, not the sizes an archive claims).
Folders are walked without following symbolic links.

Each student file the rubric names is looked for by file name anywhere in the tree
(`student/scan.cuh`, `scan.cuh` at the top, `mywork/src/scan.cuh`...); every other
file is listed as ignored.
"""
from __future__ import annotations

import difflib
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config.rubric import SubmissionLimits

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
# Folders that never hold a submission's sources: not searched, listed once.
SKIPPED_DIRS = {".git", "__MACOSX", ".svn", ".hg", "__pycache__", ".idea", ".vscode"}


class SubmissionError(Exception):
    """The submission as a whole cannot be graded (broken or oversized archive...)."""


@dataclass
class FoundFile:
    name: str          # the rubric's file name, e.g. scan.cuh
    path: str          # where it is in the submission, e.g. student/scan.cuh
    data: bytes
    sha256: str

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass
class Submission:
    name: str                      # for reports: the folder or archive name
    origin: str                    # the path that was given
    kind: str                      # folder | zip | tar
    files: dict[str, FoundFile] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)   # name -> close matches
    refused: dict[str, str] = field(default_factory=dict)         # name -> why it was not taken
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)                # skipped links, duplicates...
    error: str | None = None       # set when nothing can be graded


def submission_name(path: Path) -> str:
    name = path.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or name
    return name


def student_file_of(name: str, wanted: tuple[str, ...]) -> str | None:
    """The student file a lone file is: `scan.cuh`, or with a name before it
    (`alice_scan.cuh`, `alice-scan.cuh`); None for any other name."""
    for w in wanted:
        if name == w or (len(name) > len(w) + 1 and name.endswith(w) and name[-len(w) - 1] in "_-"):
            return w
    return None


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


# ---- unpacking ----------------------------------------------------------------------------

class _Budget:
    """Counts what an archive really expands to."""

    def __init__(self, limits: SubmissionLimits):
        self.limits = limits
        self.files = 0
        self.bytes = 0

    def add_file(self, name: str) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise SubmissionError(f"the archive holds more than {self.limits.max_files} files: "
                                  "submit only your source files")

    def add_bytes(self, name: str, count: int, file_total: int) -> None:
        self.bytes += count
        if file_total > self.limits.max_file_bytes:
            raise SubmissionError(f"{name} expands to more than {self.limits.max_file_bytes} "
                                  "bytes: refused (a compressed bomb, or a file that does not "
                                  "belong in a submission)")
        if self.bytes > self.limits.max_total_bytes:
            raise SubmissionError(f"the archive expands to more than {self.limits.max_total_bytes} "
                                  "bytes: refused")


def _safe_member_path(raw: str) -> PurePosixPath | None:
    """The relative path a member may be written to, or None when it is unsafe."""
    name = raw.replace("\\", "/")
    if not name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts) or any("\0" in p for p in parts):
        return None
    return PurePosixPath(*parts)


def _copy_limited(source: IO[bytes], target: Path, name: str, budget: _Budget) -> None:
    written = 0
    with open(target, "wb") as out:
        while True:
            chunk = source.read(1 << 16)
            if not chunk:
                break
            written += len(chunk)
            budget.add_bytes(name, len(chunk), written)
            out.write(chunk)


def _unpack_zip(archive: Path, dest: Path, budget: _Budget, notes: list[str]) -> None:
    try:
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                mode = (info.external_attr >> 16) & 0o170000
                rel = _safe_member_path(info.filename)
                if rel is None:
                    notes.append(f"skipped archive member {info.filename!r}: an absolute path or "
                                 "one that leaves the archive (..)")
                    continue
                if info.is_dir():
                    continue
                if mode and mode not in (stat.S_IFREG,):
                    kind = "a symbolic link" if mode == stat.S_IFLNK else "not a regular file"
                    notes.append(f"skipped archive member {rel}: {kind}")
                    continue
                budget.add_file(str(rel))
                if info.file_size > budget.limits.max_file_bytes:
                    budget.add_bytes(str(rel), 0, info.file_size)
                target = dest / rel
                if target.exists() and not target.is_file():
                    notes.append(f"skipped archive member {rel}: clashes with a folder")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as source:
                    _copy_limited(source, target, str(rel), budget)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError,
            RuntimeError, ValueError, OSError) as e:
        raise SubmissionError(f"the zip archive is broken or unreadable ({e})") from None


class _LimitedReader(io.RawIOBase):
    """A decompressed stream that stops at the byte budget (gzip bombs)."""

    def __init__(self, raw: io.BufferedIOBase, limit: int):
        self.raw = raw
        self.limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self.raw.read(len(view))
        self.count += len(data)
        if self.count > self.limit:
            raise SubmissionError(f"the archive expands to more than {self.limit} bytes: refused")
        view[: len(data)] = data
        return len(data)


def _unpack_tar(archive: Path, dest: Path, budget: _Budget, notes: list[str]) -> None:
    # Stream mode: nothing is seeked, and the decompressed bytes are counted.
    limit = budget.limits.max_total_bytes + budget.limits.max_files * 1024 + (1 << 20)
    try:
        with open(archive, "rb") as f:
            magic = f.read(2)
            f.seek(0)
            raw: io.BufferedIOBase = gzip.GzipFile(fileobj=f) if magic == b"\x1f\x8b" else f
            stream = io.BufferedReader(_LimitedReader(raw, limit))
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for member in tar:
                    rel = _safe_member_path(member.name)
                    if rel is None:
                        notes.append(f"skipped archive member {member.name!r}: an absolute path "
                                     "or one that leaves the archive (..)")
                        continue
                    if member.isdir():
                        continue
                    if not member.isfile():
                        kind = "a symbolic link" if member.issym() else \
                            "a hard link" if member.islnk() else "not a regular file"
                        notes.append(f"skipped archive member {rel}: {kind}")
                        continue
                    budget.add_file(str(rel))
                    budget.add_bytes(str(rel), 0, member.size)
                    target = dest / rel
                    if target.exists() and not target.is_file():
                        notes.append(f"skipped archive member {rel}: clashes with a folder")
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    source = tar.extractfile(member)
                    if source is None:
                        continue
                    _copy_limited(source, target, str(rel), budget)
    except SubmissionError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError, ValueError) as e:
        raise SubmissionError(f"the tar archive is broken or unreadable ({e})") from None


def unpack(archive: Path, dest: Path, limits: SubmissionLimits) -> list[str]:
    """Unpacks `archive` into the empty folder `dest`; returns notes on skipped members."""
    notes: list[str] = []
    budget = _Budget(limits)
    if archive.stat().st_size > limits.max_total_bytes:
        raise SubmissionError(f"the archive is larger than {limits.max_total_bytes} bytes: refused")
    if archive.name.lower().endswith(".zip"):
        _unpack_zip(archive, dest, budget, notes)
    else:
        _unpack_tar(archive, dest, budget, notes)
    return notes


# ---- finding the student files -------------------------------------------------------------

def _walk(root: Path, notes: list[str], limits: SubmissionLimits,
          links: list[str] | None = None) -> list[str]:
    """Relative paths of the regular files under root; links are not followed (their
    paths go to `links`)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            full = here / d
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                notes.append(f"skipped {rel}: a symbolic link (not followed)")
            elif d in SKIPPED_DIRS or d == "build" or d.startswith("build-"):
                notes.append(f"skipped folder {rel}/")
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            full = here / f
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                notes.append(f"skipped {rel}: a symbolic link (not followed)")
                if links is not None:
                    links.append(rel)
            elif not stat.S_ISREG(st.st_mode):
                notes.append(f"skipped {rel}: not a regular file")
            else:
                found.append(rel)
        if len(found) > limits.max_files:
            raise SubmissionError(f"the submission holds more than {limits.max_files} files: "
                                  "submit only your source files")
    return found


def _rank(rel: str) -> tuple[int, int, str]:
    """Prefer .../student/<name>, then the shallowest path."""
    parts = rel.split("/")
    in_student = len(parts) >= 2 and parts[-2] == "student"
    return (0 if in_student else 1, len(parts), rel)


def find_files(root: Path, wanted: tuple[str, ...], limits: SubmissionLimits,
               sub: Submission) -> None:
    """Fills sub.files / missing / ignored from the tree at root."""
    links: list[str] = []
    paths = _walk(root, sub.notes, limits, links)
    used: set[str] = set()
    for name in wanted:
        candidates = sorted((p for p in paths if p.rsplit("/", 1)[-1] == name), key=_rank)
        linked = sorted((p for p in links if p.rsplit("/", 1)[-1] == name), key=_rank)
        if not candidates and linked:
            sub.refused[name] = f"{linked[0]} is a symbolic link, which is not followed: submit the file itself"
            sub.notes.append(sub.refused[name])
            sub.missing[name] = []
            continue
        if not candidates:
            basenames = sorted({p.rsplit("/", 1)[-1] for p in paths})
            close = difflib.get_close_matches(name, basenames, n=3, cutoff=0.6)
            close += [b for b in basenames if b.lower() == name.lower() and b not in close]
            sub.missing[name] = close
            continue
        chosen = candidates[0]
        if len(candidates) > 1:
            sub.notes.append(f"found {len(candidates)} files named {name}: graded {chosen}; "
                             f"ignored {', '.join(candidates[1:])}")
        full = root / chosen
        size = full.stat().st_size
        if size > limits.max_student_file_bytes:
            why = f"{chosen} is {size} bytes, more than the {limits.max_student_file_bytes} allowed"
            sub.notes.append(f"{why}: not graded")
            sub.refused[name] = why
            sub.missing[name] = []
            continue
        data = full.read_bytes()
        if b"\0" in data:
            why = f"{chosen} is not a text file (it contains NUL bytes)"
            sub.notes.append(f"{why}: not graded")
            sub.refused[name] = why
            sub.missing[name] = []
            continue
        used.add(chosen)
        sub.files[name] = FoundFile(name, chosen, data, hashlib.sha256(data).hexdigest())
    sub.ignored = [p for p in paths if p not in used]


def collect(path: Path, wanted: tuple[str, ...], limits: SubmissionLimits, workdir: Path) -> Submission:
    """Reads the submission at `path`. Never raises for a bad submission: the problem
    is in Submission.error (nothing gradable) or in its notes and missing files."""
    kind = "folder" if path.is_dir() else "zip" if path.name.lower().endswith(".zip") else \
        "file" if student_file_of(path.name, wanted) else "tar"
    sub = Submission(name=submission_name(path), origin=str(path), kind=kind)
    try:
        if path.is_symlink() and not path.exists():
            raise SubmissionError(f"{path} is a broken symbolic link")
        if path.is_dir():
            root = path
        elif is_archive(path):
            root = workdir / "unpacked"
            root.mkdir(parents=True)
            sub.notes.extend(unpack(path, root, limits))
        elif path.is_file() and student_file_of(path.name, wanted):
            # A single student file submitted on its own.
            root = workdir / "unpacked"
            root.mkdir(parents=True)
            if path.stat().st_size > limits.max_total_bytes:
                raise SubmissionError(f"{path.name} is larger than {limits.max_total_bytes} bytes: refused")
            shutil.copyfile(path, root / str(student_file_of(path.name, wanted)))
        elif not path.exists():
            raise SubmissionError(f"{path} does not exist")
        else:
            raise SubmissionError(f"{path.name} is neither a folder nor a .zip/.tar.gz/.tgz/.tar "
                                  "archive")
        find_files(root, wanted, limits, sub)
    except SubmissionError as e:
        sub.error = str(e)
        return sub
    except OSError as e:
        sub.error = f"cannot read the submission: {e}"
        return sub
    if not sub.files:
        if sub.refused:
            sub.error = "every file to submit was refused: " + "; ".join(sub.refused.values())
        elif not sub.ignored:
            sub.error = "the submission is empty: no files at all"
        else:
            sub.error = (f"none of the files to submit ({', '.join(wanted)}) is in the submission; "
                         f"found only {len(sub.ignored)} other file(s)")
    return sub


def source_digest(path: Path, limit: int) -> str:
    """A digest of the submission's bytes (an archive's, or a folder's files with their
    paths; links not followed), reading at most `limit` bytes: a resumed batch regrades a
    submission whose digest changed."""
    h = hashlib.sha256()
    budget = limit
    try:
        if path.is_file():
            with open(path, "rb") as f:
                h.update(f.read(budget))
        elif path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames.sort()
                for name in sorted(filenames):
                    p = Path(dirpath, name)
                    h.update(p.relative_to(path).as_posix().encode() + b"\0")
                    if p.is_symlink() or not p.is_file() or budget <= 0:
                        continue
                    with open(p, "rb") as f:
                        data = f.read(budget)
                    budget -= len(data)
                    h.update(data)
    except OSError as e:
        h.update(str(e).encode())
    return h.hexdigest()[:16]
