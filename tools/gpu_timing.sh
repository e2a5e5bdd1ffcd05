#!/usr/bin/env bash
# Issue 47 on a GPU: the timing stage (grader/grading/timing.py) as a grade sees it.
#   1. tools/bench_grade.py --reps REPS (data/rubric.toml, the drawn cases included): each
#      grade's phases, and the reference's slowdowns (the reference's files with a comment
#      added: every task build is the student's own and is timed);
#   2. the fixtures whose timing is the point (timing cheats, slow and side-stream
#      kernels) graded with the GPU backend: each task's performance status, slowdown and
#      points, and the grade's timing phase.
# usage: [BASELINE_TIMING=FILE] [GPU_TIMING_STEPS="bench fixtures"] tools/gpu_timing.sh OUTDIR [REPS]
#   REPS: default 3
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_timing.sh OUTDIR [REPS]}
reps=${2:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
fixtures=(memo_reduce recognize_timed_reduce timer_macro side_stream_reduce uncoalesced_reduce)

bench() {
  # --trace: every step with its second (each build's gate, compile, link, checks; each
  # round's time and what the reference's process spent drawing and checking inputs).
  "$py" tools/bench_grade.py --reps "$reps" --trace --backend cuda --cuda-arch 90 --json "$out/bench$1.json" \
    > "$out/bench$1.txt" 2>&1
  echo "bench_grade$1 exit $?"
  grep -E "^(prepare|grade [0-9]|worst)" "$out/bench$1.txt"
}
steps=${GPU_TIMING_STEPS:-bench fixtures}
[[ " $steps " == *" bench "* ]] && bench ""
# BASELINE_TIMING=FILE: the same grades with FILE as grader/grading/timing.py (an earlier
# version, to compare on the same machine), then this one put back.
if [[ " $steps " == *" bench "* ]] && [ -n "${BASELINE_TIMING:-}" ]; then
  cp grader/grading/timing.py "$out/timing.py.now"
  trap 'cp "$out/timing.py.now" grader/grading/timing.py' EXIT   # put back, even if interrupted
  cp "$BASELINE_TIMING" grader/grading/timing.py
  bench "-baseline"
  cp "$out/timing.py.now" grader/grading/timing.py
  trap - EXIT
fi

[[ " $steps " == *" fixtures "* ]] || exit 0
rm -rf "$out/class"
"$py" tools/fixtures.py class "$out/class" "${fixtures[@]}" > "$out/compose.log" 2>&1 || { echo "compose failed"; exit 1; }
# tools/rubric_measure.toml, and no profile: the timing is what is measured here.
printf 'base = "%s"\n[profile]\nrun = false\n' "$PWD/tools/rubric_measure.toml" > "$out/rubric.toml"
for f in "${fixtures[@]}"; do
  "$py" -m grader grade "$out/class/$f" --backend cuda --cuda-arch 90 --rubric "$out/rubric.toml" \
    --out "$out/grade-$f" > "$out/grade-$f.txt" 2>&1
  echo "$f: exit $?"
  "$py" - "$out/grade-$f/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  score {r['score']:.2f}/{r['max_score']:g}; timing {r.get('timings', {}).get('performance', 0):.1f} s")
for t in r["tasks"]:
    perf = t["perf"][0] if t.get("perf") else {}
    print(f"  task {t['number']} {t['name']}: {t['status']} {t['correctness_points']:g}/{t['correctness_max']:g}; "
          f"{t['perf_status']} {perf.get('slowdown') or ''} perf points {t['performance_points']} "
          f"{t['perf_message'][:120]}")
PY
done
