"""A backend: where a submission's driver is built and run, the GPU (CUDA) or the CPU
emulator, and what each builds, runs, times and cannot do. A grading session chooses
one (`choose`, from --backend and the machine) and the rest of the grader asks it,
never its name: the name is what --backend, cache keys and reports say."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import COMMAND

if TYPE_CHECKING:            # data only: the results model imports this module
    from .detect import Machine, Tool


@dataclass(frozen=True)
class Backend:
    name: str                      # cuda | emulator
    binary: str                    # the driver CMake builds (build/<binary>)
    cmake_flags: tuple[str, ...]   # which of the handout's builds CMake configures
    on_gpu: bool                   # its runs hold a GPU (a GPU slot, the GPU's devices in the jail)
    times: bool                    # it can time a submission against the reference
    release_build: bool            # built Release; else the rubric's [emulator] build_type
    keeps_device_code: bool        # nvcc --keep: both passes' units and the cubin, for the checks
    address_space_limit: bool      # the memory limit binds the address space; else the data
                                   # segment (a CUDA driver maps large virtual areas)
    seeded_scheduler: bool         # SCANLAB_EMU_SEED and _THREADS: the emulator's schedule
    self_check_up_to: int | None   # runs from this size skip the driver's own CPU check
    reduced_sizes: bool            # slow runs: the rubric's [emulator] sizes (cases, applications)
    cross_checks: bool             # a grade also runs the race-check cases on the emulator and
                                   # each task's build under compute-sanitizer
    cannot: str                    # what it cannot do, in a report's words ("" nothing)
    # The profiling driver the prebuilt harness also holds: every task build's student unit
    # loaded in one process (harness/host/unit_loader.cu, grader/grading/ncu.py); "" none.
    unit_loader: str = ""

    def __str__(self) -> str:
        return self.name

    def compiler(self, machine: Machine) -> Tool:
        return machine.nvcc if self.on_gpu else machine.gxx

    def missing_tools(self, machine: Machine) -> list[str]:
        """The tools this machine lacks to build this backend's drivers."""
        needed = (machine.nvcc, machine.cmake, machine.gxx) if self.on_gpu else (machine.cmake, machine.gxx)
        return [t.name for t in needed if not t.ok]

    def run_timeout_s(self, gpu_s: float, emulator_s: float) -> float:
        """The rubric's time limit of one run on this backend ([limits] run_timeout_s or
        [emulator] run_timeout_s)."""
        return gpu_s if self.on_gpu else emulator_s

    def seed_prefix(self, seed: int, threads: int) -> str:
        """What a reproduce command puts before the driver: the emulator's schedule seed
        and worker threads (blocks at once), so that it replays the run's schedule."""
        return f"SCANLAB_EMU_SEED={seed} SCANLAB_EMU_THREADS={threads} " if self.seeded_scheduler else ""


CUDA = Backend(name="cuda", binary="scanlab", cmake_flags=("-DSCANLAB_EMULATOR=OFF", "-DSCANLAB_CUDA=ON"),
               on_gpu=True, times=True, release_build=True, keeps_device_code=True,
               address_space_limit=False, seeded_scheduler=False, self_check_up_to=1 << 22,
               reduced_sizes=False,
               cross_checks=True, cannot="", unit_loader="scanlab-units")
EMULATOR = Backend(name="emulator", binary="scanlab-emu",
                   cmake_flags=("-DSCANLAB_CUDA=OFF", "-DSCANLAB_EMULATOR=ON"),
                   on_gpu=False, times=False, release_build=False, keeps_device_code=False,
                   address_space_limit=True, seeded_scheduler=True, self_check_up_to=None,
                   reduced_sizes=True,
                   cross_checks=False, cannot="performance is not measured")
BACKENDS = {b.name: b for b in (CUDA, EMULATOR)}
AUTO = "auto"            # --backend auto: the GPU where one can be used, else the emulator


class BackendError(ValueError):
    """The backend asked for cannot be used on this machine."""


def choose(name: str, machine: Machine) -> Backend:
    """The backend --backend NAME means on this machine, checked: it can build there."""
    automatic = CUDA if machine.has_gpu and machine.can_build_cuda else EMULATOR
    backend = automatic if name == AUTO else BACKENDS.get(name)
    if backend is None:
        raise BackendError(f"unknown backend {name!r} (one of {AUTO}, {', '.join(BACKENDS)})")
    if backend.on_gpu and not machine.has_gpu:
        raise BackendError(f"--backend {backend.name}: no GPU ({machine.gpu_problem})")
    missing = backend.missing_tools(machine)
    if missing and backend.on_gpu:
        raise BackendError(f"--backend {backend.name}: cannot build CUDA drivers: {', '.join(missing)} missing")
    if missing:
        raise BackendError(f"cannot build the CPU emulator driver: {', '.join(missing)} missing "
                           f"(run `{COMMAND} doctor`)")
    return backend


def requested(name: str) -> Backend:
    """The backend a job asks for before it reaches a machine (a Slurm node): `auto` is
    the GPU, as a cluster's nodes have one."""
    return BACKENDS.get(name, CUDA)
