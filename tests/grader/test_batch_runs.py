"""The driver's many-cases modes the grader uses on both backends, on the CPU emulator:
`batch` (each case under the schedule seed its reproduce command names) and
`verify --cases` (many trusted verifies in one process). Skipped, not passed, where the
emulator cannot be built."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import fixture_driver

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
        # The batch process has no SCANLAB_EMU_SEED: each case's seed is its line's.
        assert line["reproduce"].startswith(f"SCANLAB_EMU_SEED={seed} "), line["reproduce"]
        alone = tmp_path / f"alone.{seed}.bin"
        _run([str(binary), "run", *CASE.split(), "--output", str(alone)], {"SCANLAB_EMU_SEED": str(seed)})
        assert (tmp_path / f"batch.{seed}.bin").read_bytes() == alone.read_bytes(), seed


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
