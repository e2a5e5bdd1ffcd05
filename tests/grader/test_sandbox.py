"""Sandboxed execution: time, file-size, CPU and memory limits, scrubbed environment,
the process group killed as a whole, an unprivileged user when run as root."""
from __future__ import annotations

import dataclasses
import os
import pwd
import time
from pathlib import Path

import pytest

from grader.grading import sandbox


@pytest.fixture
def home(tmp_path_factory):
    # Under /tmp (open to others) so that 'nobody' can work there when we are root.
    identity = sandbox.sandbox_identity()
    base = Path(os.path.realpath("/tmp")) / f"scanlab-sandbox-test-{os.getpid()}-{time.monotonic_ns()}"
    base.mkdir(mode=0o711)
    folder = sandbox.make_private_dir(base / "home", identity)
    yield folder, identity
    import shutil
    shutil.rmtree(base, ignore_errors=True)


def _gone(pid: int) -> bool:
    """Dead, or a zombie waiting for a reaper (killed all the same)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _run(home, argv, **limits):
    folder, identity = home
    return sandbox.run(argv, folder, sandbox.Limits(**{"wall_s": 10, **limits}),
                       sandbox.base_env(folder), identity)


def test_wall_clock_limit_kills_the_whole_group(home):
    folder, _ = home
    start = time.monotonic()
    r = _run(home, ["/bin/sh", "-c", f"sleep 60 & echo $! > {folder}/child; sleep 60"], wall_s=1)
    assert r.timed_out and r.returncode is None
    assert time.monotonic() - start < 10
    child = int((folder / "child").read_text())
    time.sleep(0.2)
    assert _gone(child), "the background child survived"
    assert "time limit" in r.describe_end()


def test_environment_is_scrubbed(home, monkeypatch):
    monkeypatch.setenv("SCANLAB_GRADER_SECRET", "hunter2")
    folder, _ = home
    r = _run(home, ["/usr/bin/env"])
    assert r.ok
    assert "hunter2" not in r.stdout
    assert f"HOME={folder}" in r.stdout and "PATH=" in r.stdout


def test_file_size_limit(home):
    folder, _ = home
    r = _run(home, ["/bin/sh", "-c", "head -c 3000000 /dev/zero > big"], file_mb=1)
    assert not r.ok
    assert (folder / "big").stat().st_size <= 1 << 20


def test_output_flood_is_cut_and_capped(home):
    r = _run(home, ["/bin/sh", "-c", "yes 'PASS PASS PASS' | head -c 5000000"], file_mb=64)
    assert r.ok
    assert len(r.stdout) < sandbox.OUTPUT_KEEP + 200
    assert "bytes left out" in r.stdout


def test_cpu_limit(home):
    r = _run(home, ["/bin/sh", "-c", "while :; do :; done"], cpu_s=1, wall_s=20)
    assert r.signal is not None and not r.timed_out
    assert r.seconds < 15


def test_memory_limit(home):
    r = _run(home, ["/usr/bin/python3", "-c", "b = bytearray(1 << 31)"], memory_mb=256)
    assert not r.ok
    assert "MemoryError" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run programs as another user")
def test_runs_as_nobody_when_root(home):
    r = _run(home, ["/usr/bin/id", "-u"])
    assert r.ok
    assert int(r.stdout.strip()) == pwd.getpwnam("nobody").pw_uid


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run programs as another user")
def test_cannot_touch_the_graders_files(home, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("answer key")
    secret.chmod(0o600)
    r = _run(home, ["/bin/cat", str(secret)])
    assert not r.ok and "answer key" not in r.stdout


def test_trusted_runs_are_not_limited(home):
    folder, _ = home
    r = sandbox.run(["/usr/bin/id", "-u"], folder, sandbox.Limits(wall_s=10), sandbox.base_env(folder),
                    sandbox.Identity(), sandboxed=False)
    assert r.ok and int(r.stdout) == os.geteuid()
def test_flood_is_counted_for_the_report(home):
    r = _run(home, ["/bin/sh", "-c", "yes 'x' | head -c 3000000"], file_mb=64)
    assert r.flooded and r.output_bytes == 3_000_000
    assert not _run(home, ["/bin/echo", "quiet"]).flooded


# ---- the jail (bubblewrap) -------------------------------------------------------------------

SENTINEL = "/tmp/scanlab-sentinel-jail-test"


@pytest.fixture
def jailed(home):
    """The test's sandbox with bubblewrap's jail, hiding this checkout (as a session does)."""
    folder, identity = home
    from conftest import REPO
    jail, why = sandbox.find_jail((str(REPO),), (), identity)
    if jail is None:
        pytest.skip(f"no bubblewrap jail here: {why}")
    return folder, dataclasses.replace(identity, jail=jail)


def test_a_jailed_program_cannot_write_outside_its_folder(jailed):
    folder, _ = jailed
    Path(SENTINEL).unlink(missing_ok=True)
    r = _run(jailed, ["/bin/sh", "-c", f"echo x > {SENTINEL}; echo y > mine.txt; "
                                      f"touch /usr/scanlab-test 2>&1; ls {SENTINEL}"])
    assert r.ok, r.stderr
    assert SENTINEL in r.stdout                 # its own private /tmp took the write...
    assert not Path(SENTINEL).exists()          # ...which is gone with it
    assert "Read-only file system" in r.stdout or "Permission denied" in r.stdout
    assert (folder / "mine.txt").read_text() == "y\n"


def test_a_jailed_program_has_no_network(jailed):
    r = _run(jailed, ["/usr/bin/python3", "-c",
                      "import socket\n"
                      "s = socket.socket()\n"
                      "s.settimeout(3)\n"
                      "try:\n"
                      "    s.connect(('1.1.1.1', 80)); print('CONNECTED')\n"
                      "except OSError as e:\n"
                      "    print('refused', e.errno)\n"
                      "print(sorted(n for _, n in socket.if_nameindex()))\n"])
    assert r.ok, r.stderr
    assert "CONNECTED" not in r.stdout and "refused" in r.stdout
    assert "['lo']" in r.stdout                 # its own network namespace: loopback only


def test_a_jailed_program_sees_neither_the_grader_nor_other_work(jailed, tmp_path):
    from conftest import REPO
    r = _run(jailed, ["/bin/sh", "-c", f"ls -A {REPO} | wc -l; cat {REPO}/solution/student/scan.cuh"])
    assert r.stdout.split()[0] == "0"           # the checkout (and its solution/) is hidden
    assert "scanBlocksKernel" not in r.stdout


def test_what_the_command_line_names_is_readable_not_writable(jailed):
    folder, identity = jailed
    outside = folder.parent / "cases.txt"
    outside.write_text("case list\n")
    outside.chmod(0o644)
    r = _run(jailed, ["/bin/sh", "-c", 'cat "$0"; echo more >> "$0" 2>&1; cat "$0"', str(outside)])
    assert r.stdout.count("case list") == 2 and "more\n" not in outside.read_text()


def test_a_missing_bwrap_is_said(monkeypatch, home):
    _, identity = home
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    jail, why = sandbox.find_jail((), (), identity)
    assert jail is None and "bubblewrap" in why and "apt-get install bubblewrap" in why


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run programs as another user")
def test_a_folder_the_sandbox_user_cannot_reach_is_not_hidden(home, tmp_path):
    # (bwrap, run as that user, could not make a mount point there; nor need it.)
    _, identity = home
    closed = tmp_path / "closed"
    (closed / "cache").mkdir(parents=True)
    closed.chmod(0o700)
    open_ = Path(os.path.realpath("/tmp")) / f"scanlab-open-{os.getpid()}"
    open_.mkdir(mode=0o755, exist_ok=True)
    try:
        jail, why = sandbox.find_jail((str(closed / "cache"), str(open_)), (), identity)
        if jail is None:
            pytest.skip(f"no bubblewrap jail here: {why}")
        assert jail.hidden == (str(open_),)
    finally:
        open_.rmdir()
