"""The prebuilt harness: a submission's build compiles only its student unit.

A CMake build of the handout compiles the harness (harness/host/driver.cu; for the emulator
also its runtime library) and the student unit (harness/host/student_unit.cu with the files
of student/), then links them. Only the student unit sees the student's files (the
harness never includes them: harness/host/student_api.h). So the grader builds the handout
once per machine, trusted, and keeps a Kit in its cache: the harness's objects and
libraries, and the commands CMake ran for the student unit and the link, with the
build's own folders turned into placeholders. A submission's build copies the handout,
writes its files, and replays those commands in a folder of its own: the compiler, the
flags and the link line of a student's `make`, without configuring CMake or compiling
the harness again.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

SRC = "<<scanlab-src>>"        # the handout copy a build compiles
BUILD = "<<scanlab-build>>"    # its build folder
KIT_FILE = "kit.json"
FORMAT = 6                     # of kit.json: part of the cache's key, so an older one is not read
FILES = "files"                # the prebuilt files, by their path in the build folder
# The trusted reference unit (grader/contract/reference/), compiled with the student unit's
# own command into this object of the build folder: a task's build links it when the
# task's file is not one of REFERENCE_UNIT_FILES (whose kernels it defines).
REFERENCE_SOURCES = {".cu": "harness/contract/reference/reference_unit.cu",
                     ".cpp": "harness/contract/reference/reference_unit_emu.cpp"}
REFERENCE_OBJECT = "reference_unit.o"
REFERENCE_UNIT_FILES = ("reduce.cuh",)
# A task build's student unit as a shared object (the profiling run's, ncu.py), in its build
# folder, and what the object exports (the handout's linker version script).
UNIT_LIBRARY = "student_unit.so"
UNIT_EXPORTS = "harness/host/unit_exports.map"


class KitError(Exception):
    """The build folder does not have what a Kit is made of."""


@dataclass(frozen=True)
class Kit:
    binary: str                       # the driver's file name in the build folder
    compile: list[str]                # the student unit's compile command (cwd: build folder)
    link: list[list[str]]             # the link commands, in order (cwd: build folder)
    written: dict[str, str]           # files the commands read (response files) -> content
    prebuilt: list[str]               # files of the build folder the link takes as they are
    objects: str                      # <binary>.objects (grader/grading/checks/compiled.py's checks read it)
    unit: str                         # the student unit's source
    folders: list[str]                # folders of the build folder the commands write into
    reference: str = ""               # the reference unit's object (REFERENCE_OBJECT), a prebuilt file
    student_object: str = ""          # the student unit's object, as the compile command writes it
    loader: str = ""                  # the unit loader's file name (a prebuilt file; "" none)

    # ---- made once, from a trusted CMake build ---------------------------------------

    @classmethod
    def capture(cls, src: Path, build: Path, binary: str, dest: Path, loader: str = "") -> "Kit":
        """The Kit of a finished CMake build (the Makefile generator, with
        CMAKE_EXPORT_COMPILE_COMMANDS), its prebuilt files copied under `dest`; with the
        unit loader `loader` where the build made it."""
        listing = _read(build / f"{binary}.objects")
        fields = dict(line.split(" ", 1) for line in listing.splitlines() if " " in line)
        if not {"harness", "student", "unit"} <= set(fields):
            raise KitError(f"{binary}.objects lacks the harness, student or unit line")
        unit = fields["unit"]
        entries = json.loads(_read(build / "compile_commands.json"))
        entry = next((e for e in entries if e.get("file") == unit), None)
        if entry is None:
            raise KitError(f"compile_commands.json has no command for {unit}")
        compile_argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        link = [shlex.split(line) for line in _read(build / "CMakeFiles" / f"{binary}.dir" / "link.txt").splitlines()
                if line.strip()]
        if not link:
            raise KitError(f"no link command for {binary}")
        # An emulator build defines the student unit's `extern __shared__` arrays from its
        # object (handout/cmake/emu_extern_shared.cmake): that file is made and compiled
        # again for every submission, before the link, not taken prebuilt.
        generated = str(build / f"{binary}-extern-shared.cpp")
        made = next((e for e in entries if e.get("file") == generated), None)
        remade: set[str] = set()
        if made is not None:
            made_argv = made["arguments"] if "arguments" in made else shlex.split(made["command"])
            cache = _read(build / "CMakeCache.txt")
            readelf = re.search(r"^CMAKE_READELF:FILEPATH=(.*)$", cache, re.M)
            cmake = re.search(r"^CMAKE_COMMAND:INTERNAL=(.*)$", cache, re.M)
            script = src / "cmake" / "emu_extern_shared.cmake"
            link = [[cmake.group(1) if cmake else "cmake", f"-DOBJECT={fields['student']}",
                     f"-DREADELF={readelf.group(1) if readelf else 'readelf'}", f"-DOUT={generated}",
                     "-P", str(script)], made_argv, *link]
            remade = {made_argv[i + 1] for i, a in enumerate(made_argv[:-1]) if a == "-o"}

        def local(path: str) -> str | None:
            """`path` as relative to the build folder, if it names a file there."""
            p = Path(path) if Path(path).is_absolute() else build / path
            try:
                rel = p.resolve().relative_to(build.resolve())
            except ValueError:
                return None
            return str(rel) if p.is_file() else None

        written: dict[str, str] = {}
        prebuilt: set[str] = set()
        for argv in [compile_argv, *link]:
            for rsp in _response_files(argv):
                rel = local(rsp)
                if rel is None:
                    continue
                written[rel] = _read(build / rel)
                if argv is not compile_argv:   # the link's lists of objects and libraries
                    prebuilt.update(r for r in map(local, shlex.split(written[rel])) if r is not None)
        for argv in link:
            prebuilt.update(r for r in map(local, argv) if r is not None)
        prebuilt.update(r for r in map(local, fields["harness"].split(";")) if r is not None)
        prebuilt -= {local(fields["student"]), binary, *written, *map(local, remade), local(generated)}
        # Folders that a command names a file in: the student object's, and a linker's
        # dependency file's (-Wl,--dependency-file=CMakeFiles/<binary>.dir/link.d, in
        # newer CMakes).
        folders = sorted({str(Path(piece).parent) for argv in [compile_argv, *link] for a in argv
                          for piece in re.split(r"[=,]", a)
                          if piece and not piece.startswith("-") and not Path(piece).is_absolute()
                          and str(Path(piece).parent) != "." and (build / piece).parent.is_dir()})
        _compile_reference(compile_argv, unit, fields["student"], src, build)
        prebuilt.add(REFERENCE_OBJECT)
        loader = loader if loader and (build / loader).is_file() else ""
        prebuilt.update([loader] if loader else [])
        kit = cls(binary=binary, compile=_placeholders(compile_argv, src, build),
                  link=[_placeholders(argv, src, build) for argv in link],
                  written={k: _placeholder(v, src, build) for k, v in written.items()},
                  prebuilt=sorted(prebuilt), objects=_placeholder(listing, src, build),
                  unit=_placeholder(unit, src, build), folders=folders, reference=REFERENCE_OBJECT,
                  student_object=_placeholder(fields["student"], src, build), loader=loader)
        for rel in kit.prebuilt:
            (dest / FILES / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(build / rel, dest / FILES / rel)
        (dest / KIT_FILE).write_text(json.dumps(asdict(kit), indent=1) + "\n")
        return kit

    @classmethod
    def load(cls, folder: Path) -> "Kit | None":
        """The Kit kept in `folder`, or None (none there, or unreadable)."""
        try:
            return cls(**json.loads((folder / KIT_FILE).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    # ---- used by every submission build ----------------------------------------------

    def lay_out(self, folder: Path, src: Path, build: Path) -> None:
        """Makes `build` (inside `src`, a copy of the handout with the student's files)
        ready for the commands: the folders they write into, the prebuilt files, the
        response files, and what grader/grading/checks/compiled.py reads (compile_commands.json and
        <binary>.objects)."""
        build.mkdir(parents=True, exist_ok=True)
        for rel in self.folders:
            (build / rel).mkdir(parents=True, exist_ok=True)
        for rel in self.prebuilt:
            (build / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / FILES / rel, build / rel)
        for rel, text in self.written.items():
            (build / rel).parent.mkdir(parents=True, exist_ok=True)
            (build / rel).write_text(_filled(text, src, build))
        (build / "compile_commands.json").write_text(json.dumps([{
            "directory": str(build), "file": _filled(self.unit, src, build),
            "command": shlex.join(self.commands(src, build)[0])}], indent=1) + "\n")
        (build / f"{self.binary}.objects").write_text(_filled(self.objects, src, build))

    def commands(self, src: Path, build: Path) -> list[list[str]]:
        """The compile command, then the link commands, to run in `build`."""
        return [[_filled(a, src, build) for a in argv] for argv in (self.compile, *self.link)]

    def unit_library_command(self, src: Path, build: Path, reference_unit: Path | None) -> list[str]:
        """The compiled student unit (and the reference unit the build links, if any) linked
        as UNIT_LIBRARY, exporting unitEntry alone, to run in `build`: the profiling run's
        object (ncu.py). nvcc's, with the shared CUDA runtime that the loader shares."""
        objects = [_filled(self.student_object, src, build), *([str(reference_unit)] if reference_unit else [])]
        return [_filled(self.compile[0], src, build), "-shared", "-cudart", "shared", "-Xlinker",
                f"--version-script={src / UNIT_EXPORTS}", "-o", UNIT_LIBRARY, *objects]


def _compile_reference(compile_argv: list[str], unit: str, student_object: str, src: Path,
                       build: Path) -> None:
    """The reference unit, compiled in `build` by the student unit's command (the same
    compiler and flags, so its kernels are what the reference's own build has) into
    REFERENCE_OBJECT; student/ of `src` holds solution/'s files (trusted)."""
    source = src / REFERENCE_SOURCES[Path(unit).suffix]
    obj = str(Path(student_object).relative_to(build)) if Path(student_object).is_absolute() \
        else student_object
    argv = [str(source) if a == unit else a.replace(obj, REFERENCE_OBJECT).replace(
        student_object, str(build / REFERENCE_OBJECT)) for a in compile_argv]
    if source.suffix == ".cu" and _knows(argv[0], STUB_FLAG):
        # nvcc 13 gives a kernel template's host stub internal linkage (whole-program
        # mode): the student unit's launch of reduceBlocksKernel<Op> would not link.
        # External here only (the student unit keeps its own stubs static); the device
        # code is the same.
        argv.append(f"-{STUB_FLAG}=false")
    r = subprocess.run(argv, cwd=build, capture_output=True, text=True)
    if r.returncode != 0 or not (build / REFERENCE_OBJECT).is_file():
        raise KitError(f"the reference unit does not compile: {(r.stdout + r.stderr)[-4000:]}")


STUB_FLAG = "static-global-template-stub"


def _knows(nvcc: str, flag: str) -> bool:
    """Whether this nvcc has the option `flag` (its --help lists it)."""
    try:
        r = subprocess.run([nvcc, "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return flag in r.stdout


def _response_files(argv: list[str]) -> list[str]:
    """The files a command reads its arguments from: @FILE, and nvcc's --options-file."""
    return [a[1:] if a.startswith("@") else argv[i + 1] for i, a in enumerate(argv)
            if a.startswith("@") or (a == "--options-file" and i + 1 < len(argv))]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise KitError(f"cannot read {path.name}: {e.strerror}") from e


def _placeholder(text: str, src: Path, build: Path) -> str:
    # The build folder first: it is inside the source folder.
    return text.replace(str(build), BUILD).replace(str(src), SRC)


def _placeholders(argv: list[str], src: Path, build: Path) -> list[str]:
    return [_placeholder(a, src, build) for a in argv]


def _filled(text: str, src: Path, build: Path) -> str:
    return text.replace(BUILD, str(build)).replace(SRC, str(src))
