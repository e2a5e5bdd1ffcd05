"""handout/tools/plot_sweep.py, the picture of `scanlab sweep` (make plot): how sweeps
are read and merged, the figures it prints, the picture, and what it says without
matplotlib or given a file that is no sweep. The driver's side (the CSV rows of every
task on the emulator and on a GPU) is tests/sweep/check_sweep.sh."""
from __future__ import annotations

import csv
import importlib.util
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SCRIPT = REPO / "handout" / "tools" / "plot_sweep.py"
spec = importlib.util.spec_from_file_location("plot_sweep", SCRIPT)
assert spec and spec.loader
plot_sweep = importlib.util.module_from_spec(spec)
sys.modules["plot_sweep"] = plot_sweep
spec.loader.exec_module(plot_sweep)

SIZES = [1 << k for k in range(10, 29, 2)]


def _write(path: Path, backend: str, series: list[tuple[str, str, float]], task: str = "scan",
           status: str = "pass") -> Path:
    """A sweep CSV as the driver writes it; `series`: (name, kind, figure at 2^28), the
    figure falling off linearly towards small n."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(plot_sweep.COLUMNS)
        for n in SIZES:
            for name, kind, top in series:
                value = top * n / SIZES[-1]
                timed = not (kind == "kernel" and status != "pass")
                gbps = f"{value:.3f}" if timed and backend == "cuda" else ""
                per_s = f"{value * 1e6:.6g}" if timed else ""
                w.writerow([name, kind, backend, "NVIDIA H100" if backend == "cuda" else "scanlab CPU emulator",
                            task, "add-i32", 256, n, status if kind == "kernel" else "pass",
                            "1.0" if timed else "", gbps, per_s])
    return path


def test_a_gpu_sweep_is_read_in_gbps_with_the_copy_as_ceiling(tmp_path):
    path = _write(tmp_path / "sweep-scan.csv", "cuda",
                  [("yours", "kernel", 1500.0), ("naive-hillis-steele", "baseline", 120.0),
                   ("device copy", "copy", 3000.0)])
    (panel,) = plot_sweep.read_sweeps([path])
    assert (panel.task, panel.unit, plot_sweep.ceiling(panel)) == ("scan", "GB/s", 3000.0)
    assert sorted(panel.series["yours"].points) == SIZES
    lines = plot_sweep.summary(panel)
    assert lines[0] == "scan (add-i32) on NVIDIA H100"
    assert "n=2^28" in lines[1] and "1500 GB/s (50% of copy)" in lines[1]
    assert "(4% of copy)" in lines[2]


def test_a_second_sweep_adds_its_kernel_by_file_name_and_not_its_baselines(tmp_path):
    mine = _write(tmp_path / "sweep-scan.csv", "cuda",
                  [("yours", "kernel", 1500.0), ("device copy", "copy", 3000.0)])
    before = _write(tmp_path / "monday.csv", "cuda",
                    [("yours", "kernel", 900.0), ("device copy", "copy", 2900.0),
                     ("cub::DeviceScan::InclusiveSum", "baseline", 2400.0)])
    (panel,) = plot_sweep.read_sweeps([mine, before])
    assert list(panel.series) == ["yours", "device copy", "yours (monday)", "cub::DeviceScan::InclusiveSum"]
    assert panel.series["yours (monday)"].points[SIZES[-1]] == 900.0
    assert plot_sweep.ceiling(panel) == 3000.0       # the first file's copy, not both


def test_an_emulator_sweep_is_in_elements_per_second_and_says_so(tmp_path):
    path = _write(tmp_path / "sweep-reduce.csv", "emulator",
                  [("yours", "kernel", 20.0), ("device copy", "copy", 5000.0)], task="reduce")
    (panel,) = plot_sweep.read_sweeps([path])
    assert panel.unit == "elements/s" and plot_sweep.ceiling(panel) is None
    assert "[CPU emulator: not GPU performance]" in plot_sweep.summary(panel)[0]


def test_a_task_not_implemented_is_listed_as_not_timed(tmp_path):
    path = _write(tmp_path / "sweep-scan.csv", "cuda",
                  [("yours", "kernel", 0.0), ("device copy", "copy", 3000.0)], status="not_implemented")
    (panel,) = plot_sweep.read_sweeps([path])
    assert not panel.series["yours"].points
    assert "yours" in plot_sweep.summary(panel)[1] and "not timed: not_implemented" in plot_sweep.summary(panel)[1]


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_the_picture_has_one_panel_per_task(tmp_path):
    pytest.importorskip("matplotlib")
    files = [_write(tmp_path / f"sweep-{t}.csv", "cuda",
                    [("yours", "kernel", 1000.0), ("device copy", "copy", 3000.0)], task=t)
             for t in ("reduce", "scan")]
    one, two = tmp_path / "one.png", tmp_path / "two.png"
    assert plot_sweep.main([str(files[0]), "--out", str(one)]) == 0
    assert plot_sweep.main([str(f) for f in files] + ["--out", str(two)]) == 0
    (w1, h1), (w2, h2) = _png_size(one), _png_size(two)
    assert w1 == w2 and h2 > 1.8 * h1


def test_without_matplotlib_it_says_how_to_install_it_and_prints_the_figures(tmp_path):
    path = _write(tmp_path / "sweep-scan.csv", "cuda",
                  [("yours", "kernel", 1500.0), ("device copy", "copy", 3000.0)])
    out = tmp_path / "sweep.png"
    # -S: without site-packages, so without matplotlib.
    run = subprocess.run([sys.executable, "-S", str(SCRIPT), str(path), "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == plot_sweep.EXIT_NO_MATPLOTLIB
    # The handout's one set-up line (issue 59 item 9): with or without sudo, into this Python.
    assert "tools/setup.sh" in run.stderr and "PYTHON=" in run.stderr and sys.executable in run.stderr
    assert "50% of copy" in run.stdout and not out.exists()


def test_a_file_that_is_no_sweep_is_refused_by_name(tmp_path, capsys):
    bad = tmp_path / "grades.csv"
    bad.write_text("submission,score\nalice,10\n")
    assert plot_sweep.main([str(bad)]) == 2
    assert "grades.csv is not a sweep CSV" in capsys.readouterr().err
    assert plot_sweep.main([str(tmp_path / "missing.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err
