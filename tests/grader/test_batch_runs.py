"""The driver's many-cases modes the grader uses on both backends, on the CPU emulator:
`batch` (each case under the schedule seed its reproduce command names) and
`verify --cases` (many trusted verifies in one process). Skipped, not passed, where the
emulator cannot be built."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import fixture_driver
from grader.config.assignment import default_assignment
from grader.machine.backend import CUDA, EMULATOR

CASE = "--task warp-scan --op add-i32 --n 5000 --block 256 --seed 7 --dist random"
SEEDS = (11, 12, 13)


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SCANLAB_EMU_THREADS": "1", **(env or {})})


def test_a_batch_case_is_the_run_its_reproduce_command_names(emu_session, tmp_path: Path):
    # A racy warp scan: its output depends on the thread schedule.
    binary = fixture_driver(emu_session, "race_warp_scan", tmp_path, "warp_scan.cuh")
    cases = tmp_path / "cases.txt"
    cases.write_text("".join(f"{CASE} --output {tmp_path}/batch.{s}.bin --schedule-seed {s}\n" for s in SEEDS))
    report = tmp_path / "batch.jsonl"
    _run([str(binary), "batch", "--cases", str(cases), "--json", str(report)])
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["case"] for line in lines] == [0, 1, 2]
    for line, seed in zip(lines, SEEDS):
        # The batch process has no SCANLAB_EMU_SEED: each case's seed is its line's; the
        # worker threads (blocks at once) are the process's, named too (issue 58).
        assert line["reproduce"].startswith(f"SCANLAB_EMU_SEED={seed} SCANLAB_EMU_THREADS=1 "), \
            line["reproduce"]
        alone = tmp_path / f"alone.{seed}.bin"
        _run([str(binary), "run", *CASE.split(), "--output", str(alone)], {"SCANLAB_EMU_SEED": str(seed)})
        assert (tmp_path / f"batch.{seed}.bin").read_bytes() == alone.read_bytes(), seed


def test_the_grader_s_reproduce_prefix_names_the_emulator_s_seed_and_threads():
    # The emulator's schedule depends on both: a command without the worker count
    # replays another schedule (issue 58). The GPU has neither.
    assert EMULATOR.seed_prefix(42, 4) == "SCANLAB_EMU_SEED=42 SCANLAB_EMU_THREADS=4 "
    assert CUDA.seed_prefix(42, 4) == ""


def test_many_verifies_in_one_process_judge_each_file(emu_session, tmp_path: Path):
    reference = emu_session.prepare().reference
    good, bad = tmp_path / "good.bin", tmp_path / "bad.bin"
    _run([str(reference), "run", *CASE.split(), "--output", str(good)])
    data = bytearray(good.read_bytes())
    data[4 * 1234] ^= 1                      # element 1234 off by one bit
    bad.write_bytes(bytes(data))
    cases = tmp_path / "verify.txt"
    cases.write_text(f"{CASE} --output {good}\n{CASE} --output {bad}\n{CASE} --output {tmp_path}/none.bin\n")
    report = tmp_path / "verify.jsonl"
    r = _run([str(reference), "verify", "--cases", str(cases), "--json", str(report)])
    assert r.returncode == 0, r.stderr
    lines = {line["case"]: line for line in map(json.loads, report.read_text().splitlines())}
    assert lines[0]["status"] == "pass"
    assert lines[1]["status"] == "fail" and lines[1]["first_mismatch"]["index"] == 1234
    assert lines[2]["status"] == "error" and "none.bin" in lines[2]["message"]


def _task_ops(binary: Path) -> list[tuple[str, str]]:
    tasks = _run([str(binary), "list", "tasks"]).stdout.split()
    return [(t, op) for t in tasks for op in _run([str(binary), "list", "operators", "--task", t]).stdout.split()]


# 17 segments of the device check (harness/host/timed_check.cuh), the last one partial: one
# group of the carries' scan; 157 segments: three groups (kGroup = 64), the last one partial.
@pytest.mark.parametrize("n", [4099, 40000])
def test_the_device_check_of_verify_gives_the_cpu_checks_verdict(emu_session, tmp_path: Path, n: int):
    """`verify --on-device` (the GPU grade's check of large outputs) run on the emulator's
    "device": for every task and operator, a right output passes and one with two wrong
    elements fails with the same count and the same first mismatch (index, expected, got)
    as the CPU check, whether the device checks it (integers, MSSP) or hands it back (floats)."""
    reference = emu_session.prepare().reference
    lines = []
    for task, op in _task_ops(reference):
        case = f"--task {task} --op {op} --n {n} --block 128 --seed 3 --dist random"
        good = tmp_path / f"{task}.{op}.bin"
        r = _run([str(reference), "run", *case.split(), "--output", str(good)])
        assert r.returncode == 0, r.stdout + r.stderr
        data = bytearray(good.read_bytes())
        width = default_assignment().operator(op).element_bytes   # an output of any size
        bad = tmp_path / f"{task}.{op}.bad.bin"
        for at in {min(3 * len(data) // 4 // width, len(data) // width - 1), 1 if len(data) // width > 1 else 0}:
            data[at * width + 3] ^= 0x40   # element `at` far off (a float's exponent)
        bad.write_bytes(bytes(data))
        lines += [f"{case} --output {good}", f"{case} --output {bad}"]
    cases = tmp_path / "verify.txt"
    cases.write_text("\n".join(lines) + "\n")
    verdicts = {}
    for mode in ("cpu", "device"):
        report = tmp_path / f"{mode}.jsonl"
        r = _run([str(reference), "verify", "--cases", str(cases), "--json", str(report),
                  *(["--on-device"] if mode == "device" else [])])
        assert r.returncode == 0, r.stderr
        verdicts[mode] = [{k: v.get(k) for k in ("status", "mismatches", "first_mismatch")}
                          for v in map(json.loads, report.read_text().splitlines())]
    assert len(verdicts["cpu"]) == len(lines)
    assert [v["status"] for v in verdicts["cpu"]] == ["pass", "fail"] * (len(lines) // 2)
    for line, cpu, device in zip(lines, verdicts["cpu"], verdicts["device"]):
        assert cpu == device, line


def _segments(binary: Path) -> list[tuple[str, int, int, str]]:
    """readelf's program headers: (type, start, size, flags)."""
    out = subprocess.run(["readelf", "-lW", str(binary)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        words = line.split()
        if words and words[0] in ("LOAD", "GNU_RELRO"):
            rows.append((words[0], int(words[2], 16), int(words[5], 16), " ".join(words[6:-1])))
    return rows


def test_the_emulators_student_state_is_writable_whatever_the_linker_defaults(emu_session):
    """The section the driver restores before every launch (emulator/student_state.ld) is
    linked the same way on every toolchain: bound now (Ubuntu's default, which Debian's
    linker does not take), with no read-only-after-relocation segment, which on Ubuntu had
    covered the section (every emulator run a segfault there, the GPU grade's race check
    with it)."""
    reference = emu_session.prepare().reference
    dynamic = subprocess.run(["readelf", "-dW", str(reference)], capture_output=True, text=True).stdout
    assert "BIND_NOW" in dynamic or " NOW" in dynamic
    sections = subprocess.run(["readelf", "-SW", str(reference)], capture_output=True, text=True).stdout
    row = next(line for line in sections.splitlines() if "scanlab_student_state" in line)
    start = int(row.split("scanlab_student_state")[1].split()[1], 16)
    segments = _segments(reference)
    assert not [s for s in segments if s[0] == "GNU_RELRO" and s[1] <= start < s[1] + s[2]], segments
    assert [s for s in segments if s[0] == "LOAD" and s[1] <= start < s[1] + s[2] and "W" in s[3]], segments


def _recorded_verifies(monkeypatch, tmp_path: Path, backend, sizes: list[int]) -> list[tuple[Path, list[str], dict, int]]:
    """verify_many over outputs of these sizes with `sandbox.run` replaced by a recorder
    that answers as the reference would (every case passes): (folder, argv, env, cases) per
    process, and the verdicts."""
    from grader.config.cases import Case
    from grader.grading import sandbox
    from grader.grading.correctness import check
    from grader.machine.slots import Resources

    calls = []

    def recorder(argv, cwd, limits, env, identity=None, sandboxed=True):
        lines = Path(argv[argv.index("--cases") + 1]).read_text().splitlines()
        Path(argv[argv.index("--json") + 1]).write_text(
            "".join(json.dumps({"case": k, "status": "pass"}) + "\n" for k in range(len(lines))))
        (cwd / ".stdout").write_text("")        # what sandbox.start makes: in the cwd
        calls.append((cwd, argv, env, len(lines)))
        return sandbox.Result(argv, 0)

    monkeypatch.setattr(check.sandbox, "run", recorder)
    setup = check.RunSetup(backend, tmp_path / "ref", tmp_path, sandbox.Identity(), Resources.create(4, [0]),
                           timeout_s=30.0, memory_mb=None, max_timeouts=1)
    items = [(Case("scan", "add-i32", n, 256, "random", True, "g"), 1, tmp_path / f"out.{k}.bin")
             for k, n in enumerate(sizes)]
    verdicts = check.verify_many(setup, items, tmp_path)
    assert [v["status"] for v in verdicts] == ["pass"] * len(sizes)
    return calls


def test_each_verify_process_has_a_folder_of_its_own(monkeypatch, tmp_path: Path):
    """Parallel verify processes in one folder shared the files their output is captured in
    (.stdout): one process's clean-up made another's grade fail with FileNotFoundError (a
    whole GPU grade lost on the H100, 16 of them at once)."""
    from grader.machine.backend import EMULATOR
    calls = _recorded_verifies(monkeypatch, tmp_path, EMULATOR, [1000 + k for k in range(9)])
    assert len(calls) == 4 and sum(c[3] for c in calls) == 9
    assert len({c[0] for c in calls}) == 4
    assert not [c for c in calls if "--on-device" in c[1]]


def test_large_outputs_are_verified_on_the_gpu_in_one_process(monkeypatch, tmp_path: Path):
    from grader.grading.correctness.check import DEVICE_VERIFY_MIN_N
    from grader.machine.backend import CUDA
    calls = _recorded_verifies(monkeypatch, tmp_path, CUDA, [1000, DEVICE_VERIFY_MIN_N, 5000,
                                                             DEVICE_VERIFY_MIN_N * 3, 7000])
    on_gpu = [c for c in calls if "--on-device" in c[1]]
    assert len(on_gpu) == 1 and on_gpu[0][3] == 2 and on_gpu[0][2]["CUDA_VISIBLE_DEVICES"] == "0"
    assert sum(c[3] for c in calls) == 5 and len({c[0] for c in calls}) == len(calls)


def test_a_huge_case_runs_beside_its_builds_batch_not_after_it(tmp_path, monkeypatch):
    # The n >= 2^31 cases run in processes of their own (run_case), started with the
    # batch: the batch here waits for the huge case to begin, and would wait in vain if
    # the huge case came after it.
    import threading
    from contextlib import nullcontext
    from types import SimpleNamespace
    from grader.config.cases import Case
    from grader.grading.correctness import check
    begun = threading.Event()
    order: list[str] = []

    def fake_run_case(setup, binary, key, case, run_seed, timeouts):
        order.append(f"huge {case.n}")
        begun.set()
        return f"result {case.n}"

    def fake_batch(setup, binary, key, cases, seeds, todo, where, say, timeouts):
        order.append("batch begins")
        assert begun.wait(10), "the huge case did not start beside the batch"
        return {i: f"result {cases[i].n}" for i in todo}

    monkeypatch.setattr(check, "run_case", fake_run_case)
    monkeypatch.setattr(check, "_run_batch", fake_batch)
    setup = SimpleNamespace(memo_lock=threading.Lock(), memo={}, workdir=tmp_path, max_timeouts=3,
                            case_limits=lambda case, timeouts, key: "its limits",
                            resources=SimpleNamespace(disk=SimpleNamespace(reserve=lambda n: nullcontext())))
    cases = [Case("scan", "add-i32", 1000), Case("scan", "add-i32", (1 << 31) + 5), Case("scan", "add-i32", 5000)]
    got = check.run_batch(setup, Path("/b/scanlab"), "key", cases, 7, check.TimeoutTracker())  # type: ignore[arg-type]
    assert got == ["result 1000", f"result {(1 << 31) + 5}", "result 5000"]
    assert order.count("batch begins") == 1 and order.count(f"huge {(1 << 31) + 5}") == 1


def test_a_remembered_run_keeps_the_visibility_of_the_case_that_asks(tmp_path):
    # A drawn hidden case may be the very run of a visible one (same id, same seed), and the
    # session remembers runs across grades: the result it gives back is the asking case's,
    # else a grade counts one visible case more (and shows a drawn case's run as visible).
    import threading
    from contextlib import nullcontext
    from types import SimpleNamespace
    from grader.config.cases import Case
    from grader.grading.correctness import check
    from grader.results import CaseResult
    visible = Case("warp-scan", "add-i32", 33, 256, "random", False, "operators")
    drawn = Case("warp-scan", "add-i32", 33, 256, "random", True, "drawn")
    seed = visible.seed(7)
    assert drawn.seed(7) == seed
    setup = SimpleNamespace(memo_lock=threading.Lock(), workdir=tmp_path, max_timeouts=3,
                            memo={("key", visible.id, seed): CaseResult(visible, seed, "pass", "pass")},
                            resources=SimpleNamespace(disk=SimpleNamespace(reserve=lambda n: nullcontext())))
    alone = check.run_case(setup, Path("/b/scanlab"), "key", drawn, 7, check.TimeoutTracker())  # type: ignore[arg-type]
    batch = check.run_batch(setup, Path("/b/scanlab"), "key", [drawn, visible], 7,  # type: ignore[arg-type]
                            check.TimeoutTracker())
    assert alone.case.hidden and alone.case.group == "drawn" and alone.status == "pass"
    assert [r.case.hidden for r in batch] == [True, False]
    assert all(r.status == "pass" for r in batch)


def test_every_timed_repetition_of_the_reference_passes_its_device_check(emu_session, tmp_path: Path):
    # The timed repetitions' check (harness/host/timed_check.cuh) over three groups of the
    # carries' scan (157 segments), for every task and operator: the reference passes every
    # repetition, warm-up included, each checked (on the device where the task is a fold or
    # a scan from the left, else on the host).
    reference = emu_session.prepare().reference
    for task, op in _task_ops(reference):
        js = tmp_path / f"{task}.{op}.json"
        r = _run([str(reference), "run", "--task", task, "--op", op, "--n", "40000", "--block", "128",
                  "--seed", "5", "--time", "--warmup", "1", "--reps", "2", "--no-check", "--json", str(js)])
        assert r.returncode == default_assignment().exit_codes.passed, (task, op, r.stdout[-2000:], r.stderr[-2000:])
        timing = json.loads(js.read_text())["timing"]
        assert timing["checked"] == 3 and timing["reps"] == 2, (task, op, timing)


def test_after_a_hang_the_cases_after_it_run_in_a_fresh_batch(tmp_path, monkeypatch):
    """A batch that stops at a hanging case: that case runs alone (and times out), the cases
    after it in a fresh batch, and pass; nothing is "not run" for an earlier hang."""
    import threading
    from contextlib import nullcontext
    from types import SimpleNamespace
    from grader.config.cases import Case
    from grader.grading.correctness import check
    from grader.results import CaseResult
    hangs = {3, 6}
    batches: list[list[int]] = []

    def fake_batch(setup, binary, key, cases, seeds, todo, where, say, timeouts):
        batches.append(list(todo))
        done = {}
        for i in todo:              # the batch runs its cases in order, and hangs at a hanging one
            if i in hangs:
                break
            done[i] = CaseResult(cases[i], seeds[i], "pass")
        return done

    def fake_run_case(setup, binary, key, case, run_seed, timeouts):
        timeouts.add(key, 20.0)
        return CaseResult(case, 0, "timeout")

    monkeypatch.setattr(check, "_run_batch", fake_batch)
    monkeypatch.setattr(check, "run_case", fake_run_case)
    setup = SimpleNamespace(memo_lock=threading.Lock(), memo={}, workdir=tmp_path, max_timeouts=1,
                            case_limits=lambda case, timeouts, key: "its limits",
                            resources=SimpleNamespace(disk=SimpleNamespace(reserve=lambda n: nullcontext())))
    cases = [Case("warp-scan", "add-i32", 100 + i) for i in range(9)]
    got = check.run_batch(setup, Path("/b/scanlab"), "key", cases, 7, check.TimeoutTracker())  # type: ignore[arg-type]
    assert [r.status for r in got] == ["pass"] * 3 + ["timeout"] + ["pass"] * 2 + ["timeout"] + ["pass"] * 2
    assert batches == [list(range(9)), [4, 5, 6, 7, 8], [7, 8]]


def test_a_hanging_build_runs_on_with_a_shortened_limit_until_its_allowance_is_spent(tmp_path):
    import dataclasses
    from grader.config.cases import Case
    from grader.grading import sandbox
    from grader.grading.correctness.check import RunSetup, TimeoutTracker
    from grader.machine.backend import EMULATOR
    from grader.machine.slots import Resources
    setup = RunSetup(EMULATOR, tmp_path / "ref", tmp_path, sandbox.Identity(), Resources.create(2, [0]),
                     timeout_s=20.0, memory_mb=16384, max_timeouts=1, hung_fraction=0.25, hang_budget=3.0)
    case, timeouts = Case("warp-scan", "add-i32", 1000), TimeoutTracker()
    assert setup.case_limits(case, timeouts, "b").wall_s == 20.0
    timeouts.add("b", 20.0)
    assert setup.case_limits(case, timeouts, "b").wall_s == 5.0           # after the first hang
    assert setup.case_limits(case, timeouts, "other build").wall_s == 20.0
    for _ in range(8):
        assert setup.case_limits(case, timeouts, "b") is not None
        timeouts.add("b", 5.0)
    assert setup.case_limits(case, timeouts, "b") is None                # 3 time limits spent
    assert setup.not_run_words("b", timeouts).startswith("could not run: this build's 9 timeout(s)")
    assert "shortened" in setup.timeout_words(dataclasses.replace(setup.limits(case), wall_s=5.0), case)


def test_a_hang_within_its_share_of_the_cases_leaves_the_others_running(tmp_path):
    """A build that hangs at one block size (5 of 126 cases) spends its time limits but not
    its share of the cases: its other cases still run, so it scores as the same bug as a
    wrong answer there. Past the share, nothing more of it starts."""
    import dataclasses
    from grader.config.cases import Case
    from grader.grading import sandbox
    from grader.grading.correctness.check import RunSetup, TimeoutTracker
    from grader.machine.backend import EMULATOR
    from grader.machine.slots import Resources
    setup = RunSetup(EMULATOR, tmp_path / "ref", tmp_path, sandbox.Identity(), Resources.create(2, [0]),
                     timeout_s=20.0, memory_mb=16384, max_timeouts=1, hung_fraction=0.25, hang_budget=2.0,
                     hang_case_share=0.1)
    case, timeouts = Case("warp-scan", "add-i32", 1000), TimeoutTracker()
    timeouts.plan("b", 126)
    timeouts.add("b", 20.0)
    for _ in range(4):
        timeouts.add("b", 5.0)                    # 2 time limits spent, 5 timeouts of 126 cases
    assert setup.case_limits(case, timeouts, "b").wall_s == 5.0
    for _ in range(8):
        timeouts.add("b", 5.0)                    # 13 timeouts: 10% of 126 cases
    assert setup.case_limits(case, timeouts, "b") is None
    assert "10% of its 126 cases" in setup.not_run_words("b", timeouts)
    # Without a share (a setup's default) the time limits alone decide.
    assert dataclasses.replace(setup, hang_case_share=0.0).case_limits(case, TimeoutTracker(), "b") is not None


def test_a_batch_stopped_under_the_shortened_limit_pins_the_hang_without_a_run_alone(tmp_path, monkeypatch):
    import threading
    from contextlib import nullcontext
    from types import SimpleNamespace
    from grader.config.cases import Case
    from grader.grading.correctness import check
    from grader.results import CaseResult
    batches: list[list[int]] = []

    def fake_batch(setup, binary, key, cases, seeds, todo, where, say, timeouts):
        batches.append(list(todo))   # every case hangs: the stuck one is pinned as a timeout
        return {todo[0]: CaseResult(cases[todo[0]], seeds[todo[0]], "timeout")}

    def refuse(*args):
        raise AssertionError("run alone")

    monkeypatch.setattr(check, "_run_batch", fake_batch)
    monkeypatch.setattr(check, "run_case", refuse)
    setup = SimpleNamespace(memo_lock=threading.Lock(), memo={}, workdir=tmp_path, max_timeouts=1,
                            case_limits=lambda case, timeouts, key: "its limits",
                            resources=SimpleNamespace(disk=SimpleNamespace(reserve=lambda n: nullcontext())))
    cases = [Case("warp-scan", "add-i32", 100 + i) for i in range(3)]
    with pytest.raises(AssertionError, match="run alone"):   # the last one is alone anyway
        check.run_batch(setup, Path("/b/scanlab"), "key", cases, 7, check.TimeoutTracker())  # type: ignore[arg-type]
    assert batches == [[0, 1, 2], [1, 2]]
