#!/usr/bin/env python3
"""`grader slurm` on a real Slurm: a single-node cluster of Debian's slurmctld and
slurmd (with its own munged) started here, no GPU gres, grading three fixture
submissions with the emulator backend. Checks that the merged files equal a local
batch of the same submissions with the same seed, and that `--resubmit` grades only
the submission whose result is gone.

usage: check_slurm.py REPO CACHE   (exit 77, which CTest reports as skipped, where the
       cluster cannot start: not root, Slurm or munge not installed, daemons failing)
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77
FIXTURES = ["reference", "handout", "commutative_reduce"]
SEED = 7
TOOLS = ["slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "munged", "mungekey"]


def skip(why: str) -> None:
    print(f"skipped: {why}")
    sys.exit(SKIP)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged, slurmctld and slurmd, each with its files in `root`."""

    def __init__(self, root: Path):
        self.root = root
        self.env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}

    def start(self) -> None:
        r = self.root
        for d in ("state", "spool", "log"):
            (r / d).mkdir()
        run(["mungekey", "--create", f"--keyfile={r / 'munge.key'}"])
        (r / "munge.key").chmod(0o600)
        run(["munged", "--force", f"--key-file={r / 'munge.key'}", f"--socket={r / 'munge.sock'}",
             f"--pid-file={r / 'munged.pid'}", f"--log-file={r / 'log' / 'munged.log'}",
             f"--seed-file={r / 'munged.seed'}"])
        host = socket.gethostname().split(".")[0]
        (r / "slurm.conf").write_text(f"""# written by tests/slurm/check_slurm.py
ClusterName=scanlabtest
SlurmctldHost={host}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={r / 'munge.sock'}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'log' / 'slurmctld.log'}
SlurmdLogFile={r / 'log' / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
SchedulerParameters=defer_batch=0
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName={host} CPUs={os.cpu_count() or 1} RealMemory=4096 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        conf = str(r / "slurm.conf")
        run(["slurmctld", "-f", conf, "-i"], self.env)
        run(["slurmd", "-f", conf], self.env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=self.env)
            if state.stdout.strip() == "idle":
                return
            time.sleep(1)
        raise RuntimeError("the node did not come up idle: " + self.logs())

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-1500:]
                         for p in sorted((self.root / "log").glob("*.log")))

    def wait(self, jobs: list[str], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            q = subprocess.run(["squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T"],
                               capture_output=True, text=True, env=self.env)
            if q.returncode == 0 and not q.stdout.strip():
                return
            time.sleep(3)
        raise AssertionError(f"jobs {jobs} still queued or running after {timeout_s:.0f} s")

    def stop(self) -> None:
        subprocess.run(["scancel", "-u", "root"], env=self.env, capture_output=True)
        for name in ("slurmd", "slurmctld", "munged"):
            pid = self.root / f"{name}.pid"
            try:
                os.kill(int(pid.read_text().split()[0]), 15)
            except (OSError, ValueError):
                pass


def run(argv: list[str], env: dict[str, str] | None = None) -> str:
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()[-500:]}")
    return r.stdout


def rows_without_timings(path: Path) -> list[dict[str, str]]:
    """grades.csv without the seconds each grade took, which differ between any two runs."""
    with path.open(newline="") as f:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(f)]


def main() -> int:
    repo, cache = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    if os.geteuid() != 0:
        skip("starting slurmctld, slurmd and munged for a test needs root")
    absent = [t for t in TOOLS if shutil.which(t) is None]
    if absent:
        skip(f"not installed: {', '.join(absent)} (tools/install_deps.sh installs Debian's "
             "slurmctld, slurmd, slurm-client and munge)")
    python = str(repo / ".venv" / "bin" / "python") if (repo / ".venv" / "bin" / "python").exists() else sys.executable
    work = Path(tempfile.mkdtemp(prefix="scanlab-slurm-"))
    cluster = Cluster(work / "cluster")
    (work / "cluster").mkdir()
    try:
        try:
            cluster.start()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            skip(f"Slurm could not start here: {e}")
        print(f"a Slurm cluster of one node is up ({work / 'cluster'})", flush=True)
        run([python, str(repo / "tools" / "fixtures.py"), "class", str(work / "class"), *FIXTURES])
        rubric = work / "rubric.toml"
        rubric.write_text(f'base = "{repo / "tests" / "grader" / "rubric-test.toml"}"\n\n'
                          '[slurm]\nminutes = 20\nmemory = "1G"\ncpus = 1\ngres = ""\n')
        # The drawn hidden cases' seed fixed too: each grade draws its own otherwise
        # (grader/config/draw.py), and the two batches must grade the same cases.
        common = ["--backend", "emulator", "--seed", str(SEED), "--draw-seed", str(SEED),
                  "--rubric", str(rubric), "--cache", str(cache), "-j", "1"]
        grader = [python, "-m", "grader"]

        def submit(*extra: str) -> tuple[list[str], str]:
            out = subprocess.run(grader + ["slurm", str(work / "class"), "--out", str(work / "slurm"),
                                           *common, *extra],
                                 capture_output=True, text=True, cwd=repo, env=cluster.env, timeout=300)
            print(out.stdout + out.stderr, flush=True)
            assert out.returncode == 0, out.stderr
            jobs = re.findall(r"submitted (?:prepare|array|merge) job (\d+)", out.stdout)
            assert jobs, out.stdout
            return jobs, out.stdout

        jobs, said = submit()
        assert f"{len(FIXTURES)} submission(s)" in said, said
        cluster.wait(jobs, 1500)
        merge_logs = sorted((work / "slurm" / "slurm" / "logs").glob("merge-*.out"))
        assert merge_logs and "merged 3 submission(s)" in merge_logs[-1].read_text(), \
            [p.read_text() for p in merge_logs] + [cluster.logs()]

        local = subprocess.run(grader + ["batch", str(work / "class"), "--out", str(work / "local"), "-q",
                                         *common], capture_output=True, text=True, cwd=repo, timeout=1500)
        assert local.returncode == 0, local.stderr[-2000:]
        slurm_rows = rows_without_timings(work / "slurm" / "grades.csv")
        assert slurm_rows == rows_without_timings(work / "local" / "grades.csv")
        assert sorted(r["submission"] for r in slurm_rows) == sorted(FIXTURES)
        for name in ("gradescope-scores.csv", "canvas-grades.csv", "class-summary.md"):
            assert (work / "slurm" / name).read_text() == (work / "local" / name).read_text(), name
        print("the merged files equal the local batch's (seed 7)", flush=True)

        # A lost result: --resubmit grades that submission only, and the merge again.
        (work / "slurm" / "submissions" / "handout" / "results.json").unlink()
        (work / "slurm" / "grades.csv").unlink()
        jobs, said = submit("--resubmit")
        assert "1 submission(s)" in said, said
        cluster.wait(jobs, 900)
        assert rows_without_timings(work / "slurm" / "grades.csv") == slurm_rows
        print("--resubmit graded the one missing submission; the merged CSV is the same", flush=True)
        return 0
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
