"""Running programs: untrusted ones in a sandbox, trusted ones plainly.

A sandboxed process gets
  - a jail from bubblewrap (bwrap, Debian's `bubblewrap`), where it can run: the system
    read-only, a private /tmp, the grader's own folders (its checkout, cache and
    workspace) hidden but for the process's work folder (writable) and the files its
    command line names (read-only), its own PID, IPC, UTS and network namespaces (no
    network), a minimal /dev plus the GPU's device nodes when it needs them. Where
    bwrap cannot run, none of this: every report then says so (Jail, find_jail);
  - a folder of its own as working directory, HOME and TMPDIR;
  - a scrubbed environment (PATH, LANG and the few variables CUDA and the emulator
    read; nothing of the grader's own environment besides);
  - limits set with setrlimit before exec: CPU seconds, file size (so a flood of
    output is cut off), memory (address space for CPU programs; the data segment for
    CUDA programs, whose driver reserves huge address ranges), no core dumps;
  - its own process group, killed as a whole at the wall-clock limit;
  - an unprivileged user (nobody) when the grader runs as root, with a cap on its
    processes.
Output goes to files and only their head and tail are read back.
"""
from __future__ import annotations

import glob
import grp
import os
import shutil
import pwd
import resource
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

OUTPUT_KEEP = 48 * 1024          # bytes of stdout/stderr kept (head and tail)
PROCESSES = 1024                 # RLIMIT_NPROC of the sandbox user (threads count too)
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
    output_bytes: int = 0          # what it wrote to stdout and stderr, all of it
    flooded: bool = False          # a stream longer than is read back (head and tail only)

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
class Jail:
    """bubblewrap's jail around sandboxed programs (see the module doc)."""

    bwrap: str
    version: str
    hidden: tuple[str, ...] = ()      # folders replaced by empty ones
    devices: tuple[str, ...] = ()     # device nodes bound in (the GPU's)

    def describe(self) -> str:
        return (f"{self.version}: read-only system, private /tmp and work folder, no network"
                + (", GPU device nodes" if self.devices else ""))

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        jail = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-all",
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for d in self.devices:
            jail += ["--dev-bind", d, d]
        for h in self.hidden:
            jail += ["--tmpfs", h]
        jail += ["--bind", str(cwd), str(cwd)]
        # What the command line names in a hidden folder (outside the work folder):
        # readable, nothing more.
        covered = [Path(h) for h in (*self.hidden, "/tmp")]
        for a in argv:
            p = Path(a)
            if p.is_absolute() and p.exists() and cwd not in p.parents and p != cwd \
                    and any(h == p or h in p.parents for h in covered):
                jail += ["--ro-bind", a, a]
        return jail + ["--chdir", str(cwd), "--", *argv]


def gpu_devices() -> tuple[str, ...]:
    return tuple(sorted(glob.glob("/dev/nvidia*")))


def _reachable(folder: Path, identity: "Identity") -> bool:
    """Whether the sandbox user could get into `folder` at all (else it needs no hiding,
    and bwrap, as that user, could not make a mount point there)."""
    if not folder.is_dir():
        return False
    if not identity.drops:
        return True
    return all(p.stat().st_mode & 0o001 for p in (folder, *folder.parents))


def find_jail(hidden: tuple[str, ...], devices: tuple[str, ...],
              identity: "Identity") -> tuple[Jail | None, str]:
    """bwrap, if it runs here as the sandbox user; else (None, why not)."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.strip() or "bubblewrap"
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"bwrap does not run: {e}"
    jail = Jail(path, version, tuple(h for h in hidden if _reachable(Path(h), identity)), devices)
    probe = Path(tempfile.mkdtemp(prefix="scanlab-jail-probe-"))
    try:
        identity.give(probe)
        r = run(["/bin/true"], probe, Limits(wall_s=30), {"PATH": "/usr/bin:/bin"},
                replace(identity, jail=jail))
    except OSError as e:
        return None, f"bwrap does not start: {e}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if not r.ok:
        why = (r.stderr or r.stdout).strip().splitlines()[-1:] or [r.describe_end()]
        return None, f"bwrap cannot make its namespaces here ({why[0][:200]})"
    return jail, ""


@dataclass(frozen=True)
class Identity:
    """Who sandboxed programs run as, and in which jail (None: none could be made)."""

    uid: int | None = None
    gid: int | None = None
    name: str = ""
    jail: Jail | None = None

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
    return start(argv, cwd, limits, env, identity, sandboxed, interactive=False).finish()


class Running:
    """A program started by start(): lines can go to its standard input while it runs
    (interactive), and finish() ends it as run() would have."""

    def __init__(self, proc: subprocess.Popen, shown: list[str], cwd: Path, limits: Limits,
                 started: float, output_dir: Path | None = None):
        self.proc = proc
        self.shown = shown
        self.cwd = cwd
        self.output_dir = output_dir or cwd   # where its .stdout and .stderr are
        self.limits = limits
        self.started = started
        self.timed_out = False

    @property
    def deadline(self) -> float:
        return self.started + self.limits.wall_s

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, line: str) -> bool:
        """Writes one line to its standard input; False when it no longer reads."""
        if self.proc.stdin is None or not self.alive():
            return False
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def wait_for(self, path: Path, timeout: float, poll_s: float = 0.002) -> bool:
        """Whether `path` appears while the program runs (within `timeout` and its own
        wall-clock limit)."""
        until = min(time.monotonic() + timeout, self.deadline)
        while True:
            if path.exists():
                return True
            if not self.alive():
                return path.exists()
            if time.monotonic() >= until:
                self.timed_out = time.monotonic() >= self.deadline
                return False
            time.sleep(poll_s)

    def finish(self, timeout: float | None = None) -> Result:
        """Closes its standard input, waits for it up to its wall-clock limit (or
        `timeout`, if sooner; past either it counts as timed out), then ends whatever is
        left of its process group; what it did, as run() says it."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        until = self.deadline if timeout is None else min(self.deadline, time.monotonic() + timeout)
        try:
            self.proc.wait(timeout=max(0.0, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.timed_out = True
        finally:
            # Whatever it left running in its group goes too.
            _kill_group(self.proc)
            self.proc.wait()
        seconds = time.monotonic() - self.started
        code = self.proc.returncode
        timed_out = self.timed_out
        out_path, err_path = self.output_dir / ".stdout", self.output_dir / ".stderr"
        written = [p.stat().st_size for p in (out_path, err_path) if p.exists()]
        result = Result(argv=self.shown, returncode=None if timed_out else (code if code >= 0 else None),
                        signal=-code if code < 0 and not timed_out else None, timed_out=timed_out,
                        seconds=seconds, stdout=_read_capped(out_path), stderr=_read_capped(err_path),
                        output_bytes=sum(written), flooded=any(n > OUTPUT_KEEP for n in written))
        for p in (out_path, err_path):
            try:
                p.unlink()
            except OSError:
                pass
        return result


def start(argv: list[str], cwd: Path, limits: Limits, env: dict[str, str],
          identity: Identity = Identity(), sandboxed: bool = True,
          interactive: bool = True, output_dir: Path | None = None) -> Running:
    """Starts argv as run() does (jail, limits, user, its own process group, output to
    files); `interactive`: with a pipe to its standard input (else /dev/null). Its output
    files go to `output_dir` (default: `cwd`; another folder lets two programs run in one
    `cwd` at once)."""
    out_path = (output_dir or cwd) / ".stdout"
    err_path = (output_dir or cwd) / ".stderr"
    cpu = int(limits.cpu_s) + 1 if limits.cpu_s else None
    memory = limits.memory_mb * (1 << 20) if limits.memory_mb else None
    memory_kind = resource.RLIMIT_AS if limits.memory_kind == "as" else resource.RLIMIT_DATA
    fsize = limits.file_mb * (1 << 20)
    nofile = limits.open_files
    nproc = PROCESSES if identity.drops else None   # a count over the whole user

    def set_limits() -> None:  # runs in the child, between fork and exec
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        if cpu:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        if memory:
            resource.setrlimit(memory_kind, (memory, memory))

    kwargs: dict = {}
    shown = list(argv)
    if sandboxed and identity.jail is not None:
        argv = identity.jail.wrap(list(argv), cwd)
    if sandboxed:
        kwargs["preexec_fn"] = set_limits
        if identity.drops:
            kwargs.update(user=identity.uid, group=identity.gid, extra_groups=[])
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if sandboxed:
            identity.give(out_path)
            identity.give(err_path)
        proc = subprocess.Popen(argv, cwd=cwd, env=env,
                                stdin=subprocess.PIPE if interactive else subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True, close_fds=True,
                                **kwargs)
    return Running(proc, shown, cwd, limits, started, output_dir)
