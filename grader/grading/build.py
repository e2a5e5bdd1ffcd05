"""Building drivers: the reference (cached) and the variants of a submission.

Every build starts from a pristine copy of the handout in a fresh temporary folder, with only the
rubric's student files in student/. The trusted reference build (handout + solution/student) verifies
every output; it and the prebuilt harness (grader/grading/prebuilt.py: a trusted CMake build of the
handout, on the emulator the reference's own, whose harness objects and commands every submission
build reuses) are cached by the hash of all that goes in (handout, solution, backend, GPU architecture,
compilers). Submission builds compile untrusted code in the sandbox; identical builds are made once.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Callable, ContextManager, Iterable, TypeVar

from .checks import compiled, object_code
from . import build_gate, contract, sandbox
from .prebuilt import FILES, FORMAT, KIT_FILE, REFERENCE_UNIT_FILES, UNIT_LIBRARY, Kit, KitError
from .build_log import failure_message, first_errors, shown_paths
from ..results import Violation
from ..config.rubric import ForbiddenRubric
from .build_types import BuildResult, Layout, Toolchain
from ..rules import code_rules
from ..config.assignment import default_assignment

T = TypeVar("T")
IGNORED_HANDOUT_DIRS = {".git", "__pycache__", ".pytest_cache"}
# Defined for a submission's student unit (never a trusted unit): the handout's
# placeholders (harness/baselines.cuh) record themselves and do no work, however they are
# reached; the driver ends such a case with the exit status `placeholder`.
GRADING_BUILD_DEFINE = "-DSCANLAB_GRADING_BUILD=1"


def task_mask(tasks: tuple[str, ...]) -> int:
    """SCANLAB_BUILD_TASKS for these driver tasks: bit i for the manifest's i-th driver
    task (the order of the generated `enum class Task`)."""
    names = default_assignment().driver_task_names
    return sum(1 << names.index(t) for t in set(tasks))


def _hash_tree(root: Path, skip_student: bool = True) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in IGNORED_HANDOUT_DIRS and not d.startswith("build"))
        for name in sorted(filenames):
            p = Path(dirpath, name)
            rel = p.relative_to(root).as_posix()
            if skip_student and rel.startswith("student/"):
                continue   # replaced in every build
            h.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def copy_handout(layout: Layout, dest: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        skip = {n for n in names if n in IGNORED_HANDOUT_DIRS}
        skip |= {n for n in names if n.startswith("build") and (here / n).is_dir()}
        if here == layout.handout:
            skip.add("student")
        return skip

    shutil.copytree(layout.handout, dest, ignore=ignore)
    (dest / "student").mkdir()
    shutil.copytree(contract.source(layout.root), dest / contract.CONTRACT_DIR, ignore=ignore)


class Builder:
    """Builds drivers for one backend; thread-safe, one build per distinct source set."""

    def __init__(self, layout: Layout, tools: Toolchain, cache_dir: Path, workdir: Path,
                 identity: sandbox.Identity, timeout_s: float, memory_mb: int,
                 forbidden: ForbiddenRubric,
                 slot: Callable[[], ContextManager[object]] = contextlib.nullcontext,
                 placeholders_do_nothing: bool = True):
        self.layout = layout
        self.tools = tools
        self.cache_dir = cache_dir.resolve()
        self.workdir = workdir.resolve()
        self.identity = identity
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.forbidden = forbidden
        self.slot = slot              # held while compiling (not while waiting for a twin build)
        # GRADING_BUILD_DEFINE in a submission's builds: the rubric's [correctness]
        # zero_for_placeholders (false: the placeholders run and earn their points)
        self.placeholders_do_nothing = placeholders_do_nothing
        self.handout_digest = _hash_tree(layout.handout) + _hash_tree(contract.source(layout.root), False)
        self._lock = threading.Lock()
        self._builds: dict[str, Future[BuildResult]] = {}
        self._made: dict[str, Future] = {}    # the reference and the kit, made once
        self.reference_files = {p.name: p.read_bytes() for p in sorted(layout.solution.glob("*"))
                                if p.is_file()}

    # ---- keys ---------------------------------------------------------------------------

    def key(self, files: dict[str, bytes], tasks: tuple[str, ...] = ()) -> str:
        h = hashlib.sha256()
        for part in (self.tools.backend.name, self.tools.cuda_arch, self.tools.compiler_id,
                     self.tools.build_type, self.handout_digest, ",".join(sorted(tasks))):
            h.update(part.encode() + b"\0")
        for name in sorted(files):
            h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        return h.hexdigest()

    def cached(self) -> bool:
        """Whether the reference and the prebuilt harness are both in the cache."""
        return (self._reference_folder() / self.tools.backend.binary).is_file() \
            and (self._kit_folder() / KIT_FILE).is_file()

    def _once(self, name: str, make: Callable[[], T], failed: Callable[[BaseException], T]) -> T:
        """make() run once per Builder, by whoever asks first; the others wait for what
        it gives (`failed(e)` if it raised: never leave them hanging)."""
        with self._lock:
            future = self._made.get(name)
            owner = future is None
            if future is None:
                future = self._made[name] = Future()
        if not owner:
            return future.result()
        try:
            result = make()
        except BaseException as e:
            result = failed(e)
        future.set_result(result)
        return result

    def _kept(self, target: Path, found: Callable[[], T | None],
              make: Callable[[Path], tuple[T, bool]]) -> T:
        """What `target` in the cache holds (`found`); else, under a file lock (another
        grader may be making it right now), make(staging) fills a staging folder that is
        renamed into place when it says so."""
        value = found()
        if value is not None:
            return value
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cache_dir / f".lock-{target.name}", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            value = found()
            if value is not None:
                return value
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.cache_dir))
            value, keep = make(staging)
            if not keep:
                shutil.rmtree(staging, ignore_errors=True)
                return value
            staging.chmod(0o755)
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
            return value

    # ---- the reference --------------------------------------------------------------------

    def reference(self) -> BuildResult:
        """The trusted reference build, from the cache when it is there."""
        return self._once("reference", self._build_reference, lambda e: BuildResult(
            "reference", False, errors=f"the reference build failed: {e}"))

    def _reference_folder(self) -> Path:
        return self.cache_dir / f"reference-{self.tools.backend.name}-{self.key(self.reference_files)[:20]}"

    def _build_reference(self) -> BuildResult:
        key = self.key(self.reference_files)
        target = self._reference_folder()
        binary = target / self.tools.backend.binary
        origins = {n: "reference" for n in self.reference_files}

        def found() -> BuildResult | None:
            return BuildResult("reference", True, binary, cached=True, key=key, origins=origins) \
                if binary.is_file() else None

        def make(staging: Path) -> tuple[BuildResult, bool]:
            result = dataclasses.replace(self._trusted_build(cub=True), label="reference", origins=origins, key=key)
            if not result.ok or result.binary is None:
                result.errors = "the REFERENCE does not build (a problem of the grader's " \
                                "installation, not of the submission):\n" + result.errors
                return result, False
            shutil.copy2(result.binary, staging / binary.name)
            (staging / "build.log").write_text(result.log)
            result.binary = binary
            return result, True

        return self._kept(target, found, make)

    def _trusted_build(self, cub: bool) -> BuildResult:
        """CMake's whole build of the reference's files, once: the kit's too where `cub` changes nothing."""
        cub = cub and self.tools.backend.on_gpu
        return self._once(f"trusted build {cub}", lambda: self._compile("trusted build", self.reference_files, {},
                          trusted=True, cub=cub), lambda e: BuildResult("trusted build", False, errors=str(e)))

    # ---- the prebuilt harness -------------------------------------------------------------

    def kit(self) -> tuple[Kit, Path] | str:
        """The prebuilt harness and its folder, from the cache when it is there; or why
        it could not be made."""
        return self._once("kit", self._build_kit,
                          lambda e: f"the prebuilt harness could not be made: {e}")

    def unit_loader(self) -> Path | None:
        """The prebuilt unit loader (ncu.py's one profiling process), if the kit has one."""
        kit = self.kit()
        if isinstance(kit, str) or not kit[0].loader:
            return None
        loader = kit[1] / FILES / kit[0].loader
        return loader if loader.is_file() else None

    def _kit_folder(self) -> Path:
        return self.cache_dir / f"kit{FORMAT}-{self.tools.backend.name}-{self.key({})[:20]}"

    def _build_kit(self) -> tuple[Kit, Path] | str:
        target = self._kit_folder()

        def found() -> tuple[Kit, Path] | None:
            kit = Kit.load(target)
            return (kit, target) if kit is not None else None

        def make(staging: Path) -> tuple[tuple[Kit, Path] | str, bool]:
            # The harness never sees the student files: the reference's stand in.
            result = self._trusted_build(cub=False)
            if not result.ok or result.binary is None:
                return ("the prebuilt harness does not build (a problem of the grader's "
                        "installation, not of the submission):\n" + result.errors), False
            try:
                kit = Kit.capture(result.binary.parent.parent, result.binary.parent,
                                  result.binary.name, staging, self.tools.backend.unit_loader)
            except (KitError, OSError, ValueError, KeyError) as e:
                return f"the prebuilt harness could not be kept: {e}", False
            return (kit, target), True

        return self._kept(target, found, make)

    # ---- submission builds --------------------------------------------------------------------

    def build(self, label: str, files: dict[str, bytes], origins: dict[str, str],
              student_paths: dict[str, str], tasks: tuple[str, ...] = ()) -> BuildResult:
        """Builds a driver from these student files (untrusted). `student_paths` maps a
        file name to its path in the submission, for error messages. `tasks`: the driver
        tasks it must run (the others are not compiled: SCANLAB_BUILD_TASKS of
        harness/host/student_unit.cu); () for all."""
        # (a build whose placeholders run is another build: its cases are another's too)
        key = self.key(files, tasks) + ("" if self.placeholders_do_nothing else "-placeholders-run")
        with self._lock:
            future = self._builds.get(key)
            owner = future is None
            if owner:
                future = self._builds[key] = Future()
        assert future is not None
        if not owner:
            shared = future.result()
            return BuildResult(label, shared.ok, shared.binary, shared.seconds, True, shared.log,
                               shared.errors, key, origins, list(shared.violations),
                               dict(shared.placeholders), unit_library=shared.unit_library,
                               is_reference=shared.is_reference)
        try:
            if self.key(files) == self.key(self.reference_files):
                result = self._reference_copy(label)
            else:
                kit = self.kit()
                if isinstance(kit, str):
                    result = BuildResult(label, False, errors=kit)
                else:
                    with self.slot():
                        result = self._compile(label, files, student_paths, trusted=False,
                                               kit=kit, tasks=tasks)
        except BaseException as e:
            result = BuildResult(label, False, errors=f"the build could not run: {e}")
        result.key = key
        result.origins = origins
        future.set_result(result)
        return result

    def _reference_copy(self, label: str) -> BuildResult:
        """The reference binary, copied where the sandboxed user can run it."""
        ref = self.reference()
        if not ref.ok or ref.binary is None:
            return BuildResult(label, False, errors=ref.errors)
        folder = Path(tempfile.mkdtemp(prefix="ref-", dir=self.workdir))
        folder.chmod(0o755)
        binary = folder / ref.binary.name
        shutil.copy2(ref.binary, binary)
        binary.chmod(0o755)
        return BuildResult(label, True, binary, 0.0, True, "identical to the reference: its "
                           "cached build is used", "", is_reference=True)

    def _compile(self, label: str, files: dict[str, bytes], student_paths: dict[str, str],
                 trusted: bool, kit: tuple[Kit, Path] | None = None, cub: bool = False,
                 tasks: tuple[str, ...] = ()) -> BuildResult:
        """One build in a fresh folder: with `kit`, the student unit compiled and linked to
        the prebuilt harness (with only `tasks`' plans, when given); else CMake's whole
        build (`cub`: with CUB's baseline)."""
        start = time.monotonic()
        where, src, build_dir, home = self._fresh_tree(files)
        own = {n: student_paths.get(n, f"student/{n}") for n in files
               if files[n] != self.reference_files.get(n)}
        sources = {own[n]: files[n].decode("utf-8", errors="replace") for n in own}
        rewrite = shown_paths(src, build_dir, {name: student_paths.get(name, contract.shown(
            name, files[name], self.reference_files)) for name in files})
        reference_unit: Path | None = None   # linked in: a task's build (contract.is_task_build)
        compile_argv: list[str] = []
        if kit is not None:
            steps, compile_argv, reference_unit = self._kit_steps(kit, src, build_dir, files, trusted, tasks)
        else:
            steps = self._cmake_steps(src, build_dir, cub)
        identity = sandbox.Identity() if trusted else self.identity
        if identity.drops:
            where.chmod(0o755)
            sandbox.give_tree(where, identity)
        env, limits = self._build_env(home)
        steps_s: dict[str, float] = {}
        constants: set[str] = set()
        compiling: sandbox.Running | None = None
        if not trusted and kit is not None:
            # What the unit reads and what the compiler sees, before anything of it is used.
            mark = time.monotonic()
            gate, compiling = build_gate.beside_compile(steps[0], where, src, env, identity, limits, lambda: self._gate(
                src, build_dir, compile_argv, sources, own, env, identity, limits))
            if isinstance(gate, str):
                # The preprocessor itself failed (or ran out of time): nothing is built
                # unless the rules could run. Its messages, as a build's, quote only public files.
                errors = code_rules.only_public_messages(first_errors(gate, rewrite), self._public_dirs())
                return BuildResult(label, False, None, time.monotonic() - start, False, gate[-20_000:],
                                   errors or "the preprocessor failed without a message")
            if gate:
                return BuildResult(label, True, None, time.monotonic() - start, False, "", "",
                                   violations=gate)
            steps_s["gate"] = time.monotonic() - mark
        step_names = ["compile", *(f"link{'' if i == 0 else ' ' + str(i + 1)}" for i in range(len(steps) - 1))] \
            if kit is not None else ["configure", "build"]
        ok, log = self._run_steps(zip(step_names, steps), src, start, env, identity, limits, trusted, steps_s,
                                  compiling)
        if compiling is not None:   # (read once the compile is over: nothing can leave it running)
            constants = build_gate.constants(src, build_dir, own)
        binary = build_dir / self.tools.backend.binary
        ok = ok and binary.is_file()
        if ok and trusted and kit is None and not cub and self.tools.backend.unit_loader:
            self._build_unit_loader(src, build_dir, env, limits)     # the kit's build (cub: the reference's)
        errors = "" if ok else failure_message(
            log, rewrite, contract.FAILED_HINT if contract.is_task_build(files, self.reference_files) else "",
            None if trusted else self._public_dirs())
        violations: list[Violation] = []
        placeholders: dict[str, str] = {}
        if not ok and not trusted and errors:
            violations = self._failed_build_violations(errors, kit is not None, src, build_dir, sources, own,
                                                       frozenset(constants), reference_unit)
        unit_library: Path | None = None
        if ok and not trusted:
            # The shared object of the profile links beside the checks; kept only where they pass.
            linking = self._start_unit_library(kit[0], where, src, build_dir, reference_unit, env, identity,
                                               limits) if kit is not None and kit[0].loader else None
            mark = time.monotonic()
            try:
                violations, placeholders = self._inspect(src, build_dir, sources, own,
                                                         frozenset(constants), reference_unit)
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                ok, errors = False, f"the compiled code could not be inspected: {e}"
            finally:
                steps_s["checks"] = time.monotonic() - mark
                unit_library = self._unit_library(linking, build_dir, steps_s, ok and not violations)
        return BuildResult(label, ok, binary if ok else None, time.monotonic() - start, False,
                           log[-200_000:], errors, violations=violations, placeholders=placeholders,
                           steps=steps_s, unit_library=unit_library)

    def _failed_build_violations(self, errors: str, kit: bool, src: Path, build_dir: Path, sources: dict[str, str],
                                 own: dict[str, str], constants: frozenset[str],
                                 reference_unit: Path | None) -> list[Violation]:
        """A failed build refused as on the GPU: a CUDA runtime call the emulator does not
        declare; or (the unit compiled, the link failed) one it declares and does not provide
        (cuda_emu.h) that the compiled code still refers to, refused by that symbol, not a
        build failure (what the compiler dropped is no reference at all)."""
        violations = compiled.undeclared_runtime_calls(errors, sources) \
            + compiled.device_thread_locals(errors, sources)
        if not violations and kit and self._student_object(build_dir) is not None:
            try:
                violations, _ = self._inspect(src, build_dir, sources, own, constants, reference_unit)
            except (OSError, RuntimeError, subprocess.SubprocessError):
                violations = []
        return violations

    def _build_env(self, home: Path) -> tuple[dict[str, str], sandbox.Limits]:
        """A build's environment (CMake's and nvcc's folders on PATH) and limits."""
        extra_path = [str(Path(self.tools.cmake).parent)]
        if self.tools.nvcc:
            extra_path.append(str(Path(self.tools.nvcc).parent))
        return sandbox.base_env(home, extra_path), sandbox.Limits(
            wall_s=self.timeout_s, memory_mb=self.memory_mb, memory_kind="data", file_mb=1024, open_files=1024)

    def _build_unit_loader(self, src: Path, build_dir: Path, env: dict[str, str], limits: sandbox.Limits) -> None:
        """The unit loader beside a trusted build's driver, for the prebuilt harness (Kit);
        where it does not build, grades profile each build's own driver instead."""
        argv = [self.tools.cmake, "--build", str(build_dir), "--target", self.tools.backend.unit_loader,
                "-j", str(max(1, self.tools.jobs))]
        with contextlib.suppress(OSError):
            self._run_steps([("unit loader", argv)], src, time.monotonic(), env, sandbox.Identity(), limits, True, {})

    def _start_unit_library(self, kit: Kit, where: Path, src: Path, build_dir: Path, reference_unit: Path | None,
                            env: dict[str, str], identity: sandbox.Identity,
                            limits: sandbox.Limits) -> sandbox.Running | None:
        """The compiled student unit being linked as a shared object (Kit.unit_library_command),
        as the student, for the one profiling process (None: it could not start)."""
        argv = [self.tools.cmake, "-E", "chdir", str(build_dir),
                *kit.unit_library_command(src, build_dir, reference_unit)]
        try:
            return sandbox.start(argv, src, limits, env, identity, interactive=False, output_dir=where)
        except OSError:
            return None

    @staticmethod
    def _unit_library(linking: sandbox.Running | None, build_dir: Path, steps_s: dict[str, float],
                      wanted: bool) -> Path | None:
        """The shared object `linking` made, where it is `wanted` (else it is ended); None
        where it does not link (that build's own driver is profiled instead): never a reason
        to fail the build."""
        if linking is None:
            return None
        if not wanted:
            linking.finish(timeout=0)
            return None
        r = linking.finish()
        steps_s["unit library"] = time.monotonic() - linking.started
        library = build_dir / UNIT_LIBRARY
        return library if r.ok and library.is_file() and not library.is_symlink() else None

    def _fresh_tree(self, files: dict[str, bytes]) -> tuple[Path, Path, Path, Path]:
        """A fresh folder with the handout and `files` in it: (the folder, its source tree,
        the build folder, the build's home)."""
        where = Path(tempfile.mkdtemp(prefix="build-", dir=self.workdir))
        src = where / "src"
        copy_handout(self.layout, src)
        for name, data in files.items():
            (src / "student" / name).write_bytes(data)
        (src / ".home").mkdir()
        return where, src, src / "build", src / ".home"

    def _kit_steps(self, kit: tuple[Kit, Path], src: Path, build_dir: Path, files: dict[str, bytes],
                   trusted: bool, tasks: tuple[str, ...]) -> tuple[list[list[str]], list[str], Path | None]:
        """The steps of a build against the prebuilt harness, the compile command as the
        gate runs it, and the reference unit it links in (a task's build), if any."""
        kit[0].lay_out(kit[1], src, build_dir)
        commands = kit[0].commands(src, build_dir)
        reference_unit: Path | None = None
        if tasks:
            commands[0] = [*commands[0], f"-DSCANLAB_BUILD_TASKS={task_mask(tasks):#x}ull"]
        if not trusted and self.placeholders_do_nothing:
            commands[0] = [*commands[0], GRADING_BUILD_DEFINE]
        if contract.is_task_build(files, self.reference_files):
            # The other student files: their contract, and the reference unit (contract.py).
            commands[0] = [*commands[0], *contract.include_flags(src)]
            if kit[0].reference and not any(n in files for n in REFERENCE_UNIT_FILES):
                reference_unit = build_dir / kit[0].reference
                commands[-1] = contract.after_student_object(commands[-1], str(reference_unit))
        compile_argv = list(commands[0])
        if not trusted and self.tools.backend.keeps_device_code:
            # nvcc keeps what its two passes saw (the host's and the device's
            # preprocessed unit) and the device code (the cubin) for the checks.
            (build_dir / "keep").mkdir()
            commands[0] = [*commands[0], "--keep", "--keep-dir", str(build_dir / "keep")]
        elif not trusted:
            # g++ reports every call it inlined: the call graph of the checks
            # (code_rules.gcc_inline_calls); the code it makes is the same.
            (build_dir / "keep").mkdir()
            commands[0] = [*commands[0], code_rules.inline_report_flag(
                str(build_dir / "keep" / code_rules.INLINE_REPORT))]
        # CMake's commands run in its build folder; `cmake -E chdir` takes them there.
        steps = [[self.tools.cmake, "-E", "chdir", str(build_dir), *argv] for argv in commands]
        return steps, compile_argv, reference_unit

    def _run_steps(self, steps: Iterable[tuple[str, list[str]]], src: Path, start: float,
                   env: dict[str, str], identity: sandbox.Identity, limits: sandbox.Limits,
                   trusted: bool, steps_s: dict[str, float],
                   first: sandbox.Running | None = None) -> tuple[bool, str]:
        """Runs the named steps in turn, within what is left of the time limit, until one
        fails; whether all passed, and their log. `steps_s` hears how long each took.
        `first`: the first step, already started (its argv is not run again)."""
        log_parts: list[str] = []
        for i, (step_name, argv) in enumerate(steps):
            mark = time.monotonic()
            remaining = self.timeout_s - (time.monotonic() - start)
            if i == 0 and first is not None:
                mark = first.started
                r = first.finish(timeout=max(0.0, remaining))
            elif remaining <= 1:
                log_parts.append(f"build: time limit of {self.timeout_s:.0f} s reached")
                return False, "\n".join(log_parts)
            else:
                r = sandbox.run(argv, src, sandbox.Limits(**{**limits.__dict__, "wall_s": remaining}),
                                env, identity, sandboxed=not trusted)
            log_parts.append(r.stdout + r.stderr)
            steps_s[step_name] = time.monotonic() - mark
            if r.timed_out:
                log_parts.append(f"build: killed after {self.timeout_s:.0f} s (build time limit)")
            if not r.ok:
                return False, "\n".join(log_parts)
        return True, "\n".join(log_parts)

    def _cmake_steps(self, src: Path, build_dir: Path, cub: bool) -> list[list[str]]:
        """Configure and build with CMake, as a student's `make` does."""
        backend = self.tools.backend
        configure = [self.tools.cmake, "-S", str(src), "-B", str(build_dir),
                     f"-DCMAKE_BUILD_TYPE={self.tools.build_type}",
                     "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
        configure += backend.cmake_flags
        if backend.on_gpu:
            if self.tools.nvcc:
                configure.append(f"-DCMAKE_CUDA_COMPILER={self.tools.nvcc}")
            if self.tools.cuda_arch:
                configure.append(f"-DCMAKE_CUDA_ARCHITECTURES={self.tools.cuda_arch}")
            if cub:
                # The reference driver (built once, cached) times CUB too: the "cub"
                # baseline of task 4 and the leaderboard's CUB row.
                configure.append("-DSCANLAB_CUB_BASELINE=ON")
        return [configure, [self.tools.cmake, "--build", str(build_dir), "--target", backend.binary,
                            "-j", str(max(1, self.tools.jobs))]]

    def _public_dirs(self) -> tuple[str, ...]:
        """The compiler's own header folders (and the CUDA toolkit's): files anyone has."""
        def find() -> tuple[str, ...]:
            # Every C++ compiler a build may use: CMake's (CXX, else c++) and nvcc's host
            # compiler (CUDAHOSTCXX, else g++ from PATH). A machine without `c++` (the
            # H100's image) must not make gcc's own <limits.h> a file outside.
            dirs: tuple[str, ...] = ()
            for cxx in dict.fromkeys(filter(None, (os.environ.get("CXX"), os.environ.get("CUDAHOSTCXX"),
                                                   "c++", "g++"))):
                dirs += tuple(d for d in code_rules.compiler_search_dirs(cxx) if d not in dirs)
            if self.tools.nvcc:
                dirs += (str(Path(self.tools.nvcc).resolve().parent.parent),)
            return dirs
        return self._once("public-dirs", find, lambda e: ())

    def _gate(self, src: Path, build_dir: Path, compile_argv: list[str], sources: dict[str, str],
              own: dict[str, str], env: dict[str, str], identity: sandbox.Identity,
              limits: sandbox.Limits) -> list[Violation] | str:
        """build_gate.gate with this builder's tools and rules (a test may set it aside)."""
        return build_gate.gate(self.tools.cmake, src, build_dir, compile_argv, sources, own, env, identity,
                               limits, self.forbidden, self._public_dirs())

    def _student_object(self, build_dir: Path) -> Path | None:
        """The student unit's object file of this build, if its compile made one."""
        listing = build_dir / f"{self.tools.backend.binary}.objects"
        if not listing.is_file():
            return None
        objects = dict(line.split(" ", 1) for line in listing.read_text().splitlines() if " " in line)
        obj = Path(objects.get("student", ""))
        return obj if objects.get("student") and obj.is_file() else None

    def _inspect(self, src: Path, build_dir: Path, sources: dict[str, str],
                 own: dict[str, str], constants: frozenset[str],
                 reference_unit: Path | None = None) -> tuple[list[Violation], dict[str, str]]:
        """The checks of grader/grading/checks/compiled.py over this build's student unit (its objects
        and source: <binary>.objects, written by handout/cmake/scanlab.cmake), and the
        student files whose task's kernels reach the handout's placeholder (path -> what
        says so)."""
        listing = (build_dir / f"{self.tools.backend.binary}.objects").read_text()
        objects = dict(line.split(" ", 1) for line in listing.splitlines() if " " in line)
        cuda = self.tools.backend.on_gpu
        keep = build_dir / "keep"
        # The device code's ELF (nvcc kept it): its writable variables are restored.
        device: list[object_code.DeviceVariable] = []
        for cubin in sorted(keep.glob("*.cubin")) if keep.is_dir() else []:
            device += object_code.read_device_variables(cubin)
        if cuda and (build_dir / self.tools.backend.binary).is_file():
            # What the driver restores before every launch (harness/host/student_state.h).
            object_code.add_device_state(build_dir / self.tools.backend.binary,
                                         object_code.device_state_names(device))
        student = contract.without_reference_calls(compiled.read_symbols(Path(objects["student"])),
                                                   reference_unit)
        found = compiled.check_symbols(student,
                                       compiled.read_symbols(Path(objects["harness"])),
                                       sources, self.forbidden,
                                       frozenset(object_code.variable_key(v.name) for v in device),
                                       constants, cuda)
        functions = object_code.read_functions(Path(objects["student"]))
        harness = object_code.harness_host_functions(build_gate.harness_includes(src, build_dir))
        toolchain = object_code.check_host_code(functions, cuda, harness) \
            + object_code.check_init_entries(Path(objects["student"]), harness, sources)
        found += [v for v in compiled.place([(f.name, f.rule, f.message) for f in toolchain], sources)
                  if v not in found]
        # nvcc's own passes (kept): the host's preprocessed unit is not the device's
        # (-E gave the gate the device's); the rules run on both.
        student_files = {f"{src}/student/{name}": shown for name, shown in own.items()}
        if cuda and not list(keep.glob("*.ii")):
            raise RuntimeError("nvcc kept no preprocessed unit (--keep) for the code rules")
        for kept in sorted((build_dir / "keep").glob("*.ii")) if (build_dir / "keep").is_dir() else []:
            for v in compiled.scan_preprocessed(kept.read_text(errors="replace"), student_files,
                                                sources, self.forbidden,
                                                contract.include_dirs(src)):
                if v not in found:
                    found.append(v)
        return found, compiled.placeholders(keep, functions, cuda, student_files, sources)
