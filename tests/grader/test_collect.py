"""Collecting submissions: archives unpacked safely, student files found by name."""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, TEST_RUBRIC
from grader.grading.collect import SubmissionError, collect, unpack
from grader.config.rubric import SubmissionLimits, load_rubric

# What the grader collects: the tasks' files and the exercise's (the manifest's list).
WANTED = load_rubric(TEST_RUBRIC).submitted_files
LIMITS = SubmissionLimits(max_total_bytes=2_000_000, max_files=50, max_file_bytes=500_000,
                          max_student_file_bytes=100_000)


def make_zip(path: Path, members: dict[str, bytes], symlinks: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return path


def make_tar(path: Path, members: dict[str, bytes], mode: str = "w:gz",
             extra: list[tarfile.TarInfo] | None = None) -> Path:
    with tarfile.open(path, mode) as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for info in extra or []:
            t.addfile(info)
    return path


def reference_files() -> dict[str, bytes]:
    return {f"student/{p.name}": p.read_bytes() for p in (REPO / "solution" / "student").glob("*.cuh")}


def test_zip_of_a_student_folder(tmp_path):
    archive = make_zip(tmp_path / "alice.zip", {**reference_files(), "README.md": b"hi"})
    sub = collect(archive, WANTED, LIMITS, tmp_path / "w")
    assert sub.error is None and sub.name == "alice" and sub.kind == "zip"
    assert set(sub.files) == set(WANTED)
    assert sub.files["scan.cuh"].path == "student/scan.cuh"
    assert sub.ignored == ["README.md"]


@pytest.mark.parametrize("name", ["scan.cuh", "alice_scan.cuh", "alice-scan.cuh"])
def test_a_single_student_file_is_a_submission(tmp_path, name):
    single = tmp_path / name
    single.write_bytes((REPO / "solution" / "student" / "scan.cuh").read_bytes())
    sub = collect(single, WANTED, LIMITS, tmp_path / "w")
    assert sub.error is None and sub.kind == "file" and list(sub.files) == ["scan.cuh"]
    assert sub.files["scan.cuh"].data == single.read_bytes()
    assert "reduce.cuh" in sub.missing
    other = tmp_path / "notes.txt"
    other.write_text("not a student file")
    assert "neither a folder nor" in (collect(other, WANTED, LIMITS, tmp_path / "w2").error or "")


@pytest.mark.parametrize("suffix, mode", [(".tar.gz", "w:gz"), (".tgz", "w:gz"), (".tar", "w")])
def test_tar_archives(tmp_path, suffix, mode):
    files = {f"bob/{k.split('/')[-1]}": v for k, v in reference_files().items()}   # top level
    archive = make_tar(tmp_path / f"bob{suffix}", files, mode)
    sub = collect(archive, WANTED, LIMITS, tmp_path / "w")
    assert sub.error is None and sub.name == "bob"
    assert sub.files["reduce.cuh"].path == "bob/reduce.cuh"


def test_zip_slip_and_absolute_paths_are_skipped(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    archive = make_zip(tmp_path / "evil.zip", {"../../escaped.txt": b"x", "/etc/evil": b"x",
                                                "a/../../up.txt": b"x", "ok/scan.cuh": b"int x;"})
    notes = unpack(archive, dest, LIMITS)
    assert not (tmp_path / "escaped.txt").exists() and not Path("/etc/evil").exists()
    assert not (tmp_path / "up.txt").exists()
    assert sum("leaves the archive" in n or "absolute" in n for n in notes) == 3
    assert [p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()] == ["ok/scan.cuh"]


def test_tar_slip_links_and_devices_are_skipped(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    link = tarfile.TarInfo("student/scan.cuh")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    hard = tarfile.TarInfo("student/reduce.cuh")
    hard.type = tarfile.LNKTYPE
    hard.linkname = "/etc/shadow"
    dev = tarfile.TarInfo("dev0")
    dev.type = tarfile.CHRTYPE
    archive = make_tar(tmp_path / "t.tar.gz", {"../../x.txt": b"x", "fine.txt": b"ok"},
                       extra=[link, hard, dev])
    notes = unpack(archive, dest, LIMITS)
    assert not (tmp_path / "x.txt").exists()
    assert not (dest / "student" / "scan.cuh").exists() and not (dest / "student" / "reduce.cuh").exists()
    assert any("symbolic link" in n for n in notes) and any("hard link" in n for n in notes)
    assert any("not a regular file" in n for n in notes)
    assert (dest / "fine.txt").read_bytes() == b"ok"


def test_symlink_in_zip_is_not_followed(tmp_path):
    archive = make_zip(tmp_path / "s.zip", {"student/reduce.cuh": b"// r"},
                       symlinks={"student/scan.cuh": "/etc/passwd"})
    sub = collect(archive, WANTED, LIMITS, tmp_path / "w")
    assert "scan.cuh" not in sub.files
    assert any("symbolic link" in n for n in sub.notes)


def test_symlinks_in_folders_are_not_followed(tmp_path):
    folder = tmp_path / "carol"
    (folder / "student").mkdir(parents=True)
    (folder / "student" / "scan.cuh").symlink_to("/etc/passwd")
    (folder / "linked").symlink_to("/etc")
    (folder / "student" / "reduce.cuh").write_text("// mine")
    sub = collect(folder, WANTED, LIMITS, tmp_path / "w")
    assert set(sub.files) == {"reduce.cuh"}
    # Two links skipped, and the wanted file that was one refused with the reason.
    assert sum(n.startswith("skipped ") and "symbolic link" in n for n in sub.notes) == 2
    assert "scan.cuh" in sub.refused


def test_zip_bomb_is_refused(tmp_path):
    # 20 MB of zeros compress to about 20 KB; the limit is 2 MB expanded.
    archive = make_zip(tmp_path / "bomb.zip", {"student/scan.cuh": b"\0" * 20_000_000})
    assert archive.stat().st_size < 100_000
    sub = collect(archive, WANTED, LIMITS, tmp_path / "w")
    assert sub.error and "refused" in sub.error
    assert not any(p.stat().st_size > LIMITS.max_file_bytes for p in (tmp_path / "w").rglob("*") if p.is_file())


def test_lying_zip_header_is_refused(tmp_path):
    # A member whose headers claim 10 bytes but that expands to 3 MB: refused either by
    # the byte count of what is written or as a broken archive, never unpacked.
    archive = make_zip(tmp_path / "liar.zip", {"a.txt": b"\0" * 3_000_000})
    data = archive.read_bytes().replace((3_000_000).to_bytes(4, "little"), (10).to_bytes(4, "little"))
    archive.write_bytes(data)
    dest = tmp_path / "o"
    dest.mkdir()
    with pytest.raises(SubmissionError):
        unpack(archive, dest, LIMITS)
    assert sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) <= LIMITS.max_file_bytes


def test_gzip_bomb_tar_is_refused(tmp_path):
    archive = make_tar(tmp_path / "bomb.tar.gz", {f"f{i}.bin": b"\0" * 400_000 for i in range(10)})
    sub = collect(archive, WANTED, LIMITS, tmp_path / "w")
    assert sub.error and "refused" in sub.error


def test_too_many_files(tmp_path):
    archive = make_zip(tmp_path / "many.zip", {f"f{i}.txt": b"x" for i in range(LIMITS.max_files + 1)})
    sub = collect(archive, WANTED, LIMITS, tmp_path / "w")
    assert sub.error and "more than" in sub.error


@pytest.mark.parametrize("content", [b"PK\x03\x04 truncated", b"not an archive at all", b""])
def test_broken_archives(tmp_path, content):
    for name in ("broken.zip", "broken.tar.gz"):
        archive = tmp_path / name
        archive.write_bytes(content)
        sub = collect(archive, WANTED, LIMITS, tmp_path / f"w-{name}")
        assert sub.error and ("broken" in sub.error or "empty" in sub.error), sub.error


def test_truncated_real_zip(tmp_path):
    good = make_zip(tmp_path / "g.zip", reference_files())
    cut = tmp_path / "cut.zip"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    sub = collect(cut, WANTED, LIMITS, tmp_path / "w")
    assert sub.error and "broken" in sub.error


def test_prefers_student_folder_and_reports_duplicates(tmp_path):
    folder = tmp_path / "dave"
    for rel in ("scan.cuh", "student/scan.cuh", "old/student/x/scan.cuh", "backup/scan.cuh"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(f"// {rel}")
    sub = collect(folder, WANTED, LIMITS, tmp_path / "w")
    assert sub.files["scan.cuh"].path == "student/scan.cuh"
    assert any("found 4 files named scan.cuh" in n for n in sub.notes)
    assert "scan.cuh" in sub.ignored and "backup/scan.cuh" in sub.ignored


def test_close_names_are_suggested(tmp_path):
    folder = tmp_path / "erin"
    (folder / "src").mkdir(parents=True)
    (folder / "Scan.cuh").write_text("x")
    (folder / "src" / "warpscan.cuh").write_text("x")
    (folder / "reduce.cu").write_text("x")
    sub = collect(folder, WANTED, LIMITS, tmp_path / "w")
    assert sub.error and "none of the files" in sub.error
    assert "Scan.cuh" in sub.missing["scan.cuh"]
    assert "warpscan.cuh" in sub.missing["warp_scan.cuh"]
    assert "reduce.cu" in sub.missing["reduce.cuh"]


def test_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    sub = collect(tmp_path / "empty", WANTED, LIMITS, tmp_path / "w")
    assert sub.error == "the submission is empty: no files at all"


def test_binary_or_huge_student_files_are_refused(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "scan.cuh").write_bytes(b"int x;\0\0")
    (folder / "reduce.cuh").write_bytes(b"/" * (LIMITS.max_student_file_bytes + 1))
    (folder / "warp_scan.cuh").write_text("// ok")
    sub = collect(folder, WANTED, LIMITS, tmp_path / "w")
    assert set(sub.files) == {"warp_scan.cuh"}
    assert any("NUL" in n for n in sub.notes) and any("bytes, more than" in n for n in sub.notes)


def test_build_folders_and_git_are_skipped(tmp_path):
    folder = tmp_path / "g"
    (folder / "build").mkdir(parents=True)
    (folder / "build" / "scan.cuh").write_text("// stale copy")
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("x")
    (folder / "student").mkdir()
    (folder / "student" / "scan.cuh").write_text("// mine")
    sub = collect(folder, WANTED, LIMITS, tmp_path / "w")
    assert sub.files["scan.cuh"].path == "student/scan.cuh"
    assert not any(p.startswith((".git", "build")) for p in sub.ignored)


def test_not_a_submission(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("x")
    sub = collect(f, WANTED, LIMITS, tmp_path / "w")
    assert sub.error and "neither a folder nor" in sub.error
    assert collect(tmp_path / "missing", WANTED, LIMITS, tmp_path / "w2").error.endswith("does not exist")


def test_refused_files_say_why(tmp_path):
    # A student file that is too large, not text, or a symbolic link is refused with the
    # reason, not reported as absent.
    folder = tmp_path / "f"
    (folder / "student").mkdir(parents=True)
    (folder / "student" / "scan.cuh").write_bytes(b"int x;\0\0")
    (folder / "student" / "reduce.cuh").write_bytes(b"/" * (LIMITS.max_student_file_bytes + 1))
    (folder / "student" / "warp_scan.cuh").symlink_to("/etc/passwd")
    sub = collect(folder, WANTED, LIMITS, tmp_path / "w")
    assert sub.files == {}
    assert sub.refused["scan.cuh"] == "student/scan.cuh is not a text file (it contains NUL bytes)"
    assert sub.refused["reduce.cuh"].startswith(
        f"student/reduce.cuh is {LIMITS.max_student_file_bytes + 1} bytes, more than the")
    assert sub.refused["warp_scan.cuh"] == ("student/warp_scan.cuh is a symbolic link, which is not "
                                            "followed: submit the file itself")
    # Nothing left to grade: the error says why, not that the files are absent.
    assert sub.error is not None and sub.error.startswith("every file to submit was refused: ")
