"""The assignment text by task (issue 44): what a student reads for one task, quick start
included, fits in 200 lines; every task page has the same parts; its facts are generated
(task 4's CHUNK is LookbackPolicy's, and its page says why a register warp scan is
needed); links and anchors resolve. And the handout Makefile's laptop mode and JOBS, on
its dry run (make -n: nothing is built)."""
from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HANDOUT = REPO / "handout"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))
import make_handout  # noqa: E402
from grader.config.assignment import load_assignment  # noqa: E402
from grader.config.rubric import load_rubric  # noqa: E402

# Its expectations follow data/'s list of tasks (pyproject.toml's markers).
pytestmark = pytest.mark.task_list

MAX_LINES = 200
TASK_PAGES = sorted(p for p in (HANDOUT / "tasks").glob("*.md") if p.name[0].isdigit())



def parts(text: str) -> tuple[str, ...]:
    """The parts a page must have: all of them written by hand, those that follow from the
    sources generated (README.md, "To add a task")."""
    return make_handout.GENERATED_PARTS if make_handout.is_generated_page(text) else make_handout.PAGE_PARTS


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_every_task_has_a_page():
    numbers = {t.number for t in load_rubric(make_handout.RUBRIC).tasks}
    assert {int(p.name.split("-")[0]) for p in TASK_PAGES} == numbers


@pytest.mark.parametrize("page", TASK_PAGES, ids=lambda p: p.name)
def test_one_task_with_the_quick_start_fits_in_200_lines(page: Path):
    total = lines(HANDOUT / "README.md") + lines(page)
    assert total <= MAX_LINES, f"README.md + tasks/{page.name}: {total} lines, more than {MAX_LINES}"


@pytest.mark.parametrize("page", TASK_PAGES, ids=lambda p: p.name)
def test_every_task_page_has_the_same_parts_in_order(page: Path):
    text = page.read_text()
    check_parts(text, parts(text))


def check_parts(text: str, wanted: tuple[str, ...]) -> None:
    at = [text.find(part) for part in wanted]
    assert all(a >= 0 for a in at), [p for p, a in zip(wanted, at) if a < 0]
    assert at == sorted(at)
    assert set(make_handout.GENERATED_PARTS) <= set(wanted)
    if "## The three commonest mistakes" in wanted:
        mistakes = text[text.index("## The three commonest mistakes"):text.index("## What the grader checks")]
        assert re.findall(r"^(\d)\. ", mistakes, re.M) == ["1", "2", "3"]
    # The generated facts sit between their markers, and say the task's points.
    facts = text[text.index(make_handout.FACTS_BEGIN):text.index(make_handout.FACTS_END)]
    assert "**Points**" in facts


def generated_pages() -> dict[str, str]:
    """The page the generator writes for each task, as if it had none written by hand."""
    a, rubric = load_assignment(make_handout.MANIFEST), load_rubric(make_handout.RUBRIC)
    policy = make_handout.read_policy(make_handout.POLICY.read_text())
    return {make_handout.task_page_name(t): make_handout.generated_task_page(
        t.number, a, rubric, policy, (make_handout.SOLUTION / t.file).read_text()) for t in a.tasks}


def test_a_generated_page_states_every_contract_of_its_file():
    # Any task's page, generated: never a stub. Each function the student writes with its
    # call and its doc comment, its placeholder, the task's facts and its driver tasks'
    # commands; within the quick start's 200 lines, with the parts that follow from the sources.
    a, rubric = load_assignment(make_handout.MANIFEST), load_rubric(make_handout.RUBRIC)
    pages = generated_pages()
    for t in a.tasks:
        text = pages[make_handout.task_page_name(t)]
        assert make_handout.is_generated_page(text) and text.count("\n# ") == 1
        check_parts(text, make_handout.GENERATED_PARTS)
        assert f"# Task {t.number}: {t.title} (`student/{t.file}`" in text
        functions = make_handout.student_functions((make_handout.SOLUTION / t.file).read_text(), t.file)
        assert set(t.kernels) <= {f.name for f in functions}
        header = "\n".join(make_handout.header_comment((make_handout.SOLUTION / t.file).read_text()))
        assert header.strip() and make_handout.paragraphs(tuple(header.splitlines())) in text
        for f in functions:   # its doc comment, or the file's first block that names it
            assert f"- `{f.call}`: " + ("\n  ".join(f.doc) if f.doc else "as described above.") in text
            assert f.doc or re.search(rf"\b{f.name}\b", header)
            assert "```cuda\n" + "\n".join(f.placeholder) + "\n```" in text
        assert f"./build/scanlab-emu test --tasks {','.join(t.driver_tasks)} " in text
        assert all(f"`{d}`" in text.split("## What the grader checks")[1] for d in t.driver_tasks)
        scored = next(r for r in rubric.tasks if r.number == t.number)
        assert make_handout.points_fact(scored, rubric) in text
        assert lines(HANDOUT / "README.md") + len(text.splitlines()) <= MAX_LINES


def test_a_function_without_its_contract_gets_no_generated_page():
    a, rubric = load_assignment(make_handout.MANIFEST), load_rubric(make_handout.RUBRIC)
    policy = make_handout.read_policy(make_handout.POLICY.read_text())
    t = a.tasks[0]
    source = (make_handout.SOLUTION / t.file).read_text()
    first = make_handout.student_functions(source, t.file)[0]
    # Its doc comment gone, and a first comment block that does not name it.
    header = "".join(f"{line}\n" for line in itertools.takewhile(lambda l: l.startswith("//"), source.splitlines()))
    undocumented = source.replace(header, "// A task.\n", 1).replace(
        "".join(f"// {line}".rstrip() + "\n" for line in first.doc), "", 1)
    assert first.name not in undocumented.split("#pragma")[0] and first.doc
    assert make_handout.student_functions(undocumented, t.file)[0].doc == ()
    with pytest.raises(SystemExit, match=f"{first.name} has no doc comment"):
        make_handout.generated_task_page(t.number, a, rubric, policy, undocumented)


def test_the_quick_start_links_every_task_page():
    a = load_assignment(make_handout.MANIFEST)
    readme = (HANDOUT / "README.md").read_text()
    table = readme[readme.index(make_handout.TASKS_BEGIN):readme.index(make_handout.TASKS_END)]
    for t in a.tasks:
        page = f"tasks/{make_handout.task_page_name(t)}"
        assert f"| [{page}]({page}) | `student/{t.file}` |" in table


def test_task_pages_facts_are_what_the_generator_writes_from_policy():
    a, rubric = load_assignment(make_handout.MANIFEST), load_rubric(make_handout.RUBRIC)
    policy = make_handout.read_policy(make_handout.POLICY.read_text())
    for page in TASK_PAGES:
        number = int(page.name.split("-")[0])
        assert make_handout.task_facts(number, a, rubric, policy) in page.read_text(), page.name


def test_policy_is_read_from_policy_cuh_and_a_change_there_changes_the_facts():
    text = make_handout.POLICY.read_text()
    policy = make_handout.read_policy(text)
    changed = make_handout.read_policy(text.replace("kBytesPerThread = 80;", "kBytesPerThread = 48;"))
    assert changed.lookback_bytes == 48 != policy.lookback_bytes
    a, rubric = load_assignment(make_handout.MANIFEST), load_rubric(make_handout.RUBRIC)
    assert make_handout.task_facts(4, a, rubric, changed) != make_handout.task_facts(4, a, rubric, policy)
    assert "12 for `add-i32`" in make_handout.task_facts(4, a, rubric, changed)
    with pytest.raises(SystemExit, match="LookbackPolicy"):
        make_handout.read_policy(text.replace("kBytesPerThread = 80;", ""))


def test_task_4_states_its_chunk_and_the_register_warp_scan():
    text = (HANDOUT / "tasks" / "4-lookback-scan.md").read_text()
    assert "12 for 4-byte" not in text and "task 3's `CHUNK` for the others" not in text
    assert "`LookbackPolicy`: 80 bytes a thread" in text
    assert "20 for `add-i32`" in text and "5 for `mssp`" in text and "10 for `seg-add-i32`" in text
    assert "no room for `scanIncWarp`" in text and "**registers**" in text and "shuffleUp" in text


def test_the_write_up_is_answerable_without_a_gpu():
    text = (HANDOUT / "appendix" / "B-performance.md").read_text()
    write_up = text[text.index("## B.3 The write-up"):text.index("## B.4")]
    assert "without a GPU" in write_up and "make profile" in write_up
    assert "PREDICT_N=" in write_up and "figures/README.md" in write_up


LINK = re.compile(r"\]\(([^)#\s]+)?(?:#([^)\s]+))?\)")


def anchors(path: Path) -> set[str]:
    out = set()
    for heading in re.findall(r"^#+ (.+)$", path.read_text(), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        out.add(slug)
    return out


def test_links_and_anchors_resolve():
    pages = [HANDOUT / "README.md", *sorted((HANDOUT / "tasks").glob("*.md")),
             *sorted((HANDOUT / "appendix").glob("*.md"))]
    for page in pages:
        for target, anchor in LINK.findall(page.read_text()):
            if target.startswith("http"):
                continue
            dest = (page.parent / target).resolve() if target else page
            assert dest.exists(), f"{page.relative_to(HANDOUT)}: {target} does not exist"
            if anchor:
                assert anchor in anchors(dest), f"{page.relative_to(HANDOUT)}: no #{anchor} in {target}"


# ---- the Makefile, dry run ----------------------------------------------------------------

def fake_bin(folder: Path, gpu: bool, nvcc: bool) -> dict[str, str]:
    """A PATH where nvidia-smi lists a GPU (or none) and nvcc is there (or not)."""
    folder.mkdir(parents=True, exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + ('echo "GPU 0: NVIDIA H100 (UUID: x)"\n' if gpu else "exit 9\n"))
    smi.chmod(0o755)
    if nvcc:
        (folder / "nvcc").write_text("#!/bin/sh\nexit 0\n")
        (folder / "nvcc").chmod(0o755)
    keep = {shutil.which(t) and str(Path(shutil.which(t)).parent) for t in ("make", "cmake", "sh", "grep", "nproc")}
    path = [str(folder)] + sorted(p for p in keep if p and "cuda" not in p)
    return {**os.environ, "PATH": os.pathsep.join(path)}


def dry_run(env: dict[str, str], *args: str) -> list[str]:
    p = subprocess.run(["make", "-n", "-C", str(HANDOUT), "BUILD=/nonexistent-build", *args],
                       env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def builds(out: list[str]) -> list[str]:
    return [line for line in out if "cmake --build" in line]


def test_laptop_mode_builds_the_emulator_only_and_says_so_once(tmp_path):
    env = fake_bin(tmp_path / "bin", gpu=False, nvcc=True)
    for goals in (["all"], ["grade-local", "apps", "plot"], ["test"]):
        out = dry_run(env, *goals)
        notes = [line for line in out if "laptop mode" in line]
        assert len(notes) == 1 and "no GPU found" in notes[0], (goals, out)
        first = builds(out)[0]
        assert "--target scanlab-emu scanlab-emu-with-harness-" in first, first
    out = dry_run(env, "test")
    assert any("ctest" in line and "suite\\.gpu" in line for line in out)
    # GPU=1: the whole build, no note.
    out = dry_run(env, "all", "GPU=1")
    assert not any("laptop mode" in line for line in out)
    assert "--target" not in builds(out)[0]


def test_a_gpu_and_nvcc_build_everything(tmp_path):
    env = fake_bin(tmp_path / "bin", gpu=True, nvcc=True)
    out = dry_run(env, "all")
    assert not any("laptop mode" in line for line in out)
    assert "--target" not in builds(out)[0]
    if not Path("/usr/local/cuda/bin/nvcc").exists():
        no_nvcc = dry_run(fake_bin(tmp_path / "bin2", gpu=True, nvcc=False), "all")
        assert any("laptop mode, no nvcc found" in line for line in no_nvcc)


def test_jobs_bounds_every_parallel_build(tmp_path):
    env = fake_bin(tmp_path / "bin", gpu=False, nvcc=False)
    goals = ["all", "emu", "emu-test", "emu-asan", "grade-local", "profile"]
    out = dry_run(env, "JOBS=3", *goals)
    found = builds(out)
    assert len(found) >= len(goals)
    for line in found:
        assert re.search(r"cmake --build \S+ -j 3( |$)", line), line
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    for line in builds(dry_run(env, *goals)):
        assert re.search(rf"cmake --build \S+ -j {cores}( |$)", line), line
    # No bare -j (unbounded) anywhere in the Makefile's recipes.
    assert not re.search(r"-j\s*(\\|$|--)", (HANDOUT / "Makefile").read_text(), re.M)


def test_emu_test_runs_the_isolation_check_by_default(tmp_path):
    env = fake_bin(tmp_path / "bin", gpu=False, nvcc=False)
    text = "\n".join(dry_run(env, "emu-test"))
    assert "test --isolated --student ." in text and '[ "1" = 1 ]' in text
    assert '[ "0" = 1 ]' in "\n".join(dry_run(env, "emu-test", "ISOLATED=0"))


def test_profile_predicts_at_the_write_ups_and_the_graded_size(tmp_path):
    env = fake_bin(tmp_path / "bin", gpu=False, nvcc=False)
    assert "--predict-n '2^24,graded'" in "\n".join(dry_run(env, "profile"))
    assert "--predict-n '2^20'" in "\n".join(dry_run(env, "profile", "PREDICT_N=2^20"))


def test_laptop_mode_is_said_by_emu_and_emu_test_too(tmp_path):
    """Issue 59: `make emu` and `make emu-test` said nothing of laptop mode."""
    env = fake_bin(tmp_path / "bin", gpu=False, nvcc=False)
    for goals in (["emu"], ["emu-test"], ["emu", "emu-test"], ["profile"]):
        notes = [line for line in dry_run(env, *goals) if "laptop mode" in line]
        assert len(notes) == 1 and "no GPU found" in notes[0], (goals, notes)
    assert not any("laptop mode" in line for line in dry_run(env, "clean"))


# ---- the set-up line ------------------------------------------------------------------

def setup_env(folder: Path, root: bool, sudo: bool, python_kind: str) -> dict[str, str]:
    """A PATH with a fake id (root or not), sudo (or none), dpkg (nothing installed) and a
    python3 without matplotlib whose sys.prefix says what kind of Python it is."""
    folder.mkdir(parents=True, exist_ok=True)
    scripts = {
        "id": f"#!/bin/sh\necho {0 if root else 1000}\n",
        "dpkg": "#!/bin/sh\nexit 1\n",
        "python3": "#!/bin/sh\ncase \"$*\" in *'import matplotlib'*) exit 1;; esac\n"
                   f"case \"$*\" in *sys.prefix*) echo {python_kind};; esac\n",
    }
    if sudo:
        scripts["sudo"] = "#!/bin/sh\nexit 0\n"
    for name, text in scripts.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return {**os.environ, "PATH": str(folder), "DRY_RUN": "1"}  # the fakes only (sh by its path)


@pytest.mark.parametrize("root,sudo,kind,want", [
    (False, True, "system", ["+ sudo apt-get install -y g++ cmake make libboost-context-dev",
                              "+ sudo apt-get install -y python3-matplotlib"]),
    (True, False, "system", ["+ apt-get install -y g++ cmake make libboost-context-dev",
                             "+ apt-get install -y python3-matplotlib"]),
    (True, False, "env", ["+ apt-get install -y g++", "+ python3 -m pip install matplotlib"]),
    (False, True, "other", ["+ python3 -m pip install --user matplotlib"]),
])
def test_the_set_up_line_works_with_and_without_sudo_into_the_makefiles_python(tmp_path, root, sudo, kind, want):
    """Issue 59: `sudo apt-get install ...` failed without sudo, and python3-matplotlib went
    to the system Python whatever python3 the Makefile runs."""
    env = setup_env(tmp_path / "bin", root, sudo, kind)
    p = subprocess.run(["/bin/sh", str(HANDOUT / "tools" / "setup.sh")], env=env, capture_output=True, text=True)
    for line in want:
        assert any(out.startswith(line) for out in p.stdout.splitlines()), (line, p.stdout, p.stderr)
    assert "sudo" not in p.stdout or sudo


def test_the_set_up_line_without_root_or_sudo_says_what_to_ask_for(tmp_path):
    env = setup_env(tmp_path / "bin", root=False, sudo=False, python_kind="env")
    p = subprocess.run(["/bin/sh", str(HANDOUT / "tools" / "setup.sh")], env=env, capture_output=True, text=True)
    assert p.returncode == 1
    assert "no sudo" in p.stderr and "apt-get install g++" in p.stderr
    assert "+ python3 -m pip install matplotlib" in p.stdout  # the Python part still runs
    readme = (HANDOUT / "README.md").read_text()
    assert "sh tools/setup.sh" in readme and "sudo apt-get install" not in readme


def test_task_4_shows_how_a_tile_id_goes_into_a_spare_slot():
    """Issue 59: the page said "two spare slots (for the tile id ...)" but not how an unsigned
    goes into a slot typed as the element. The harness's helper, its example and the page."""
    state = (HANDOUT / "harness" / "tile_state.cuh").read_text()
    assert re.search(r"unsigned\* tileIdSlot\(T\* slot\)", state)
    assert "*tileSlot = atomicAdd(tiles.tileCounter, 1u);" in state  # the example
    page = (HANDOUT / "tasks" / "4-lookback-scan.md").read_text()
    assert "lookback::tileIdSlot" in page and "harness/tile_state.cuh" in page
    assert "lookback::tileIdSlot(" in (REPO / "solution" / "student" / "lookback_scan.cuh").read_text()
