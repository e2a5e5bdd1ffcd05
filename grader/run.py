"""Running programs: untrusted ones in a sandbox, trusted ones plainly.

A sandboxed process gets
  - a folder of its own as working directory, HOME and TMPDIR;
  - a scrubbed environment (PATH, LANG and the few variables CUDA and the emulator
    read; nothing of the grader's own environment besides);
  - limits set with setrlimit before exec: CPU seconds, file size (so a flood of
    output is cut off), memory (address space for CPU programs; the data segment for
    CUDA programs, whose driver reserves huge address ranges), no core dumps;
  - its own process group, killed as a whole at the wall-clock limit;
  - an unprivileged user (nobody) when the grader runs as root.
Output goes to files and only their head and tail are read back.
"""
from __future__ import annotations

import grp
import os
import pwd
import resource
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

OUTPUT_KEEP = 48 * 1024          # bytes of stdout/stderr kept (head and tail)
# Variables passed through to sandboxed programs when the grader has them.
PASSED_ENV = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES",
              "NVIDIA_DRIVER_CAPABILITIES", "CUDA_MODULE_LOADING")


@dataclass(frozen=True)
class Limits:
    wall_s: float
    cpu_s: float | None = None
    memory_mb: int | None = None
    memory_kind: str = "as"        # "as" (RLIMIT_AS) or "data" (RLIMIT_DATA)
    file_mb: int = 64
    open_files: int = 256


@dataclass
class Result:
    argv: list[str]
    returncode: int | None         # None when killed by the wall-clock limit
    signal: int | None = None      # the signal that ended it
    timed_out: bool = False
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe_end(self) -> str:
        if self.timed_out:
            return f"killed after {self.seconds:.0f} s (time limit)"
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            extra = {"SIGXCPU": ": CPU time limit", "SIGXFSZ": ": wrote too much output",
                     "SIGKILL": ": killed (out of memory?)", "SIGSEGV": ": segmentation fault",
                     "SIGABRT": ": aborted", "SIGBUS": ": bus error"}.get(name, "")
            return f"crashed with {name}{extra}"
        return f"exit status {self.returncode}"


@dataclass(frozen=True)
class Identity:
    """Who sandboxed programs run as."""

    uid: int | None = None
    gid: int | None = None
    name: str = ""

    @property
    def drops(self) -> bool:
        return self.uid is not None

    def give(self, path: str | Path, follow_symlinks: bool = True) -> None:
        """Makes `path` the sandboxed user's (nothing when no user is dropped to)."""
        if self.uid is not None and self.gid is not None:
            os.chown(path, self.uid, self.gid, follow_symlinks=follow_symlinks)


def sandbox_identity(user: str | None = "nobody") -> Identity:
    """`user` when the grader runs as root (and `user` exists); else the grader's own."""
    if os.geteuid() != 0 or not user:
        return Identity(name=pwd.getpwuid(os.geteuid()).pw_name)
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return Identity(name="root")
    gid = entry.pw_gid
    for group in ("nogroup", "nobody"):
        try:
            gid = grp.getgrnam(group).gr_gid
            break
        except KeyError:
            continue
    return Identity(entry.pw_uid, gid, user)


def _read_capped(path: Path) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if size <= OUTPUT_KEEP:
                data = f.read()
            else:
                head = f.read(OUTPUT_KEEP * 2 // 3)
                f.seek(size - OUTPUT_KEEP // 3)
                tail = f.read()
                data = head + f"\n[... {size - len(head) - len(tail)} bytes left out ...]\n".encode() + tail
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def make_private_dir(path: Path, identity: Identity) -> Path:
    """A folder the sandboxed user owns (mode 700)."""
    path.mkdir(parents=True, exist_ok=True)
    identity.give(path)
    path.chmod(0o700)
    return path


def give_tree(path: Path, identity: Identity) -> None:
    """Hands a whole tree to the sandboxed user (a build folder)."""
    if not identity.drops:
        return
    for dirpath, dirnames, filenames in os.walk(path):
        identity.give(dirpath)
        for name in filenames:
            identity.give(os.path.join(dirpath, name), follow_symlinks=False)


def open_path_for(path: Path, identity: Identity, stop: Path) -> None:
    """Lets the sandboxed user traverse every folder from `stop` down to `path`."""
    if not identity.drops:
        return
    p = path
    while True:
        mode = p.stat().st_mode
        p.chmod(mode | 0o011)
        if p == stop or p.parent == p:
            break
        p = p.parent


def base_env(home: Path, extra_path: list[str] | None = None) -> dict[str, str]:
    path = [p for p in (extra_path or []) if p] + ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {"PATH": os.pathsep.join(dict.fromkeys(path)), "HOME": str(home), "TMPDIR": str(home),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    for key in PASSED_ENV:
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def run(argv: list[str], cwd: Path, limits: Limits, env: dict[str, str],
        identity: Identity = Identity(), sandboxed: bool = True) -> Result:
    """Runs argv to completion or to the wall-clock limit. Never raises for what the
    program does; raises OSError only when it cannot be started at all."""
    out_path = cwd / ".stdout"
    err_path = cwd / ".stderr"
    cpu = int(limits.cpu_s) + 1 if limits.cpu_s else None
    memory = limits.memory_mb * (1 << 20) if limits.memory_mb else None
    memory_kind = resource.RLIMIT_AS if limits.memory_kind == "as" else resource.RLIMIT_DATA
    fsize = limits.file_mb * (1 << 20)
    nofile = limits.open_files

    def set_limits() -> None:  # runs in the child, between fork and exec
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        if cpu:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if memory:
            resource.setrlimit(memory_kind, (memory, memory))

    kwargs: dict = {}
    if sandboxed:
        kwargs["preexec_fn"] = set_limits
        if identity.drops:
            kwargs.update(user=identity.uid, group=identity.gid, extra_groups=[])
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if sandboxed:
            identity.give(out_path)
            identity.give(err_path)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, start_new_session=True, close_fds=True, **kwargs)
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            proc.wait()
        finally:
            # Whatever it left running in its group goes too.
            _kill_group(proc)
    seconds = time.monotonic() - start
    code = proc.returncode
    result = Result(argv=list(argv), returncode=None if timed_out else (code if code >= 0 else None),
                    signal=-code if code < 0 and not timed_out else None, timed_out=timed_out,
                    seconds=seconds, stdout=_read_capped(out_path), stderr=_read_capped(err_path))
    for p in (out_path, err_path):
        try:
            p.unlink()
        except OSError:
            pass
    return result
