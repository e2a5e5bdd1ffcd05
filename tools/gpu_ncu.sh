#!/usr/bin/env bash
# Issue 43 on a GPU machine (CI has none): Nsight Compute in the grade and the newest CUB
# in make bench.
#   1. ncu alone (as this user) on the reference's reduce with the grader's metric list:
#      that every metric exists on this GPU, and what one profiled run costs: the
#      grader's list at the profiled n and at 2^24, without the smsp__sass_* metrics (SASS
#      patching), with one cheap metric only, and the run without ncu (ncu_cost.txt);
#   2. `prepare` (the reference's baselines and its ncu figures, once per machine: its
#      time printed), then a GPU grade of the reference and the three fixtures of known
#      cause (uncoalesced_reduce, occupancy_reduce, bank_conflict_scan), ncu on: each
#      timed task's figures beside the reference's, the diagnosis, and ncu's cost per
#      grade (printed; issue 43's budget: <= 3 s), also of the reference's files each
#      with a comment added (reference_commented: every timed task the student's own
#      build, all in one ncu process); ncu's raw pages kept in
#      OUTDIR/ncu-logs (SCANLAB_KEEP_NCU_LOGS) for tests/grader/data/ncu (the
#      bank_conflict_scan page there is still hand-written);
#   3. make bench with both CUBs (the toolkit's and the nvidia-cuda-cccl wheel's: no
#      network here, so the wheel comes from WHEEL_DIR).
#
# usage: tools/gpu_ncu.sh OUTDIR [WHEEL_DIR]
#   WHEEL_DIR  a folder holding nvidia_cuda_cccl-*.whl (default: .whl; made elsewhere with
#              `pip download nvidia-cuda-cccl --no-deps -d .whl`)
# One log per step in OUTDIR, a line per step on stdout, then the diagnoses and the bench.
# GPU_NCU_STEPS="grades summary" runs only those steps (of: ncu_alone grades summary bench),
# e.g. to split the run in two under a time limit.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_ncu.sh OUTDIR [WHEEL_DIR]}
wheels=${2:-.whl}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -d "$wheels" ] && wheels=$(cd "$wheels" && pwd)
build=build-ncu
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
fixtures=(reference uncoalesced_reduce occupancy_reduce bank_conflict_scan)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
failed=0

ncu_alone() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
    cmake --build "$build" -j "$(nproc)" --target scanlab-reference || return
  local metrics
  metrics=$("$py" -c "from grader.grading import ncu; print(','.join(ncu.METRICS))")
  "$ncu" --version
  local n start rc
  n=$("$py" -c "from pathlib import Path; from grader.config.rubric import load_rubric; print(load_rubric(Path('data/rubric.toml')).profile.n)")
  start=$(date +%s%N)
  "$ncu" --csv --page raw --print-units base --metrics "$metrics" --log-file "$out/ncu-alone.csv" \
    "$build/scanlab-reference" run --task reduce --op add-i32 --n "$n" --block 256 --no-check
  rc=$?
  echo "ncu alone on reduce at n=$n: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms"
  grep -E "==(ERROR|WARNING)==" "$out/ncu-alone.csv"
  # Where ncu's time goes: one process each, the same run (seconds, wall).
  local nosass one size
  nosass=$(echo "$metrics" | tr ',' '\n' | grep -v '^smsp__sass_' | paste -sd,)
  one=gpu__time_duration.sum
  {
    for size in "$n" 16777216; do
      timed "no ncu, n=$size" "$build/scanlab-reference" run --task reduce --op add-i32 --n "$size" --block 256 --no-check
      timed "ncu, the grader's metrics, n=$size" "$ncu" --csv --page raw --print-units base --metrics "$metrics" \
        --log-file /dev/null "$build/scanlab-reference" run --task reduce --op add-i32 --n "$size" --block 256 --no-check
      timed "ncu, without smsp__sass_*, n=$size" "$ncu" --csv --page raw --print-units base --metrics "$nosass" \
        --log-file /dev/null "$build/scanlab-reference" run --task reduce --op add-i32 --n "$size" --block 256 --no-check
      timed "ncu, $one only, n=$size" "$ncu" --csv --page raw --print-units base --metrics "$one" \
        --log-file /dev/null "$build/scanlab-reference" run --task reduce --op add-i32 --n "$size" --block 256 --no-check
    done
  } | tee "$out/ncu_cost.txt"
  "$py" - "$out/ncu-alone.csv" <<'PY'
import sys
from grader.grading import ncu
text = open(sys.argv[1]).read()
rows = ncu.parse_raw_csv(text)      # raises when a metric is missing from the page
empty = sorted({m for r in rows for m, v in r.values.items() if v is None})
print(f"{len(rows)} launches profiled; metrics without a value: {empty or 'none'}")
print(ncu.task_figures(rows))
PY
}

timed() {
  local what=$1 start rc
  shift
  start=$(date +%s%N)
  "$@" > /dev/null 2>&1
  rc=$?
  printf '  %-48s exit %s  %6d ms\n' "$what" "$rc" "$(( ($(date +%s%N) - start) / 1000000 ))"
}

# The names of the reference_commented submissions: one, or COMMENTED_REPS=K of them (ncu's
# cost varies between runs), each with a comment of its own.
commented() {
  echo reference_commented
  seq 2 "${COMMENTED_REPS:-1}" | sed 's/^/reference_commented_/'
}

grades() {
  rm -rf "$out/class"
  "$py" tools/fixtures.py class "$out/class" "${fixtures[@]}" || return
  # The reference's files with a comment added to each: every timed task is the student's
  # own build, all profiled (in one process: the unit loader), as in a student's grade.
  local name more f
  more=$(commented)
  for name in $more; do
    cp -r "$out/class/reference" "$out/class/$name"
    for f in "$out/class/$name"/student/*.cuh; do echo "// $name" >> "$f"; done
  done
  # tools/rubric_measure.toml: no compute-sanitizer, race check or drawn cases; ncu as
  # data/rubric.toml has it.
  local rubric=$PWD/tools/rubric_measure.toml
  local f rc=0 one start
  # As a grading machine is set up: the reference's baselines and ncu figures, once.
  start=$SECONDS
  "$py" -m grader prepare --backend cuda --cuda-arch 90 --rubric "$rubric" > "$out/prepare.txt" 2>&1 || rc=1
  echo "prepare: $((SECONDS - start)) s (builds, baselines and the reference's ncu figures)"
  grep -E "profil" "$out/prepare.txt"
  for f in "${fixtures[@]}" $more; do
    SCANLAB_KEEP_NCU_LOGS="$out/ncu-logs" "$py" -m grader grade "$out/class/$f" --backend cuda \
      --cuda-arch 90 --rubric "$rubric" --out "$out/grade-$f" > "$out/grade-$f.txt" 2>&1
    one=$?
    echo "$f: exit $one"
    [ $one -eq 0 ] || rc=1
  done
  # With COMMENTED_REPS: the same grades without the profile, to say what it adds to a
  # grade (it runs beside the timing's last check on the CPU).
  if [ -n "${COMMENTED_REPS:-}" ]; then
    printf 'base = "%s"\n[profile]\nrun = false\n' "$rubric" > "$out/rubric-noprofile.toml"
    for f in $more; do
      "$py" -m grader grade "$out/class/$f" --backend cuda --cuda-arch 90 --rubric "$out/rubric-noprofile.toml" \
        --out "$out/grade-$f-noprofile" > "$out/grade-$f-noprofile.txt" 2>&1 || rc=1
    done
  fi
  return $rc
}

summary() {
  # shellcheck disable=SC2046
  "$py" - "$out" "${fixtures[@]}" $(commented) <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
for name in sys.argv[2:]:
    path = out / f"grade-{name}" / "results.json"
    if not path.is_file():
        print(f"== {name}: no results.json (see grade-{name}.txt)")
        continue
    r = json.loads(path.read_text())
    phases = r.get("timings", {})
    print(f"== {name}: score {r['score']:.2f}/{r['max_score']:g}; grade {r['seconds']:.1f} s, "
          f"of it ncu {phases.get('profile', 0):.1f} s (the profile phase; the reference's figures "
          "come from prepare's cache; budget <= 3 s)")
    print(f"  timing {phases.get('performance', 0):.1f} s + profile {phases.get('profile', 0):.1f} s")
    plain = out / f"grade-{name}-noprofile" / "results.json"
    if plain.is_file():
        p = json.loads(plain.read_text())
        print(f"  without the profile: grade {p['seconds']:.1f} s, timing {p.get('timings', {}).get('performance', 0):.1f} s")
    seconds = {t["profile"]["seconds"] for t in r["tasks"] if t.get("profile")}
    print(f"  the submission's ncu process: {', '.join(f'{s:.1f} s' for s in seconds) or 'none'}")
    for t in r["tasks"]:
        p = t.get("profile")
        perf = t["perf"][0] if t["perf"] else None
        slow = f"{perf['slowdown']:.2f}x the reference" if perf and perf.get("slowdown") else t["perf_status"]
        if not p:
            continue
        print(f"  task {t['number']} {t['name']}: {slow}; profile {p['status']} {p['message']}")
        for who in ("student", "reference"):
            f = p.get(who)
            if f:
                f = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in f.items()}
                # By value: results.json keeps the stalls as a JSON object (any order).
                f["stalls"] = dict(sorted(((k, round(v, 2)) for k, v in f["stalls"].items()),
                                          key=lambda kv: -kv[1]))
                main = f["main_kernel"].split("(")[0].split("<")[0].split()[-1] if f.get("main_kernel") else "-"
                print(f"    {who:9} dram {f['dram_pct']}% occ {f['achieved_occupancy_pct']}/"
                      f"{f['theoretical_occupancy_pct']}% ({f['blocks_per_sm']} blocks of "
                      f"{f['threads_per_block']}, {f['occupancy_limiter']}) regs {f['registers_per_thread']} "
                      f"smem {f['shared_bytes_per_block']} ld {f['load_sectors_per_request']}/"
                      f"{f['load_ideal_sectors_per_request']} st {f['store_sectors_per_request']}/"
                      f"{f['store_ideal_sectors_per_request']} shared {f['shared_wavefronts_per_request']} "
                      f"L2 {f['l2_hit_pct']}% stalls {list(f['stalls'].items())[:3]} "
                      f"(occupancy of {main}, {len(f['kernels'])} kernels)")
        for d in p["diagnoses"]:
            print(f"    diagnosis: {d}")
PY
}

bench() {
  CCCL_WHEEL="$wheels" make bench BUILD="$build"
}

step() {
  local name=$1 start=$SECONDS
  "$name" > "$out/$name.log" 2>&1
  local rc=$?
  printf '%-10s exit %-3s %5s s\n' "$name" "$rc" "$((SECONDS - start))"
  [ $rc -eq 0 ] || { failed=$((failed + 1)); tail -n 20 "$out/$name.log" | sed 's/^/    /'; }
}

for s in ${GPU_NCU_STEPS:-ncu_alone grades summary bench}; do
  step "$s"
  case $s in
    ncu_alone) grep -E "^ncu alone|metrics without a value|^  " "$out/ncu_alone.log" ;;
    grades) grep -E "^prepare|profil|: exit" "$out/grades.log"
            grep -h "profiling under" "$out"/grade-*.txt ;;
    summary) cat "$out/summary.log" ;;
    bench) grep -E "CUB|cub|n = 2\^|reference|copy|newest" "$out/bench.log" | head -90 ;;
  esac
done
echo "steps failed: $failed"
exit $((failed > 0))
