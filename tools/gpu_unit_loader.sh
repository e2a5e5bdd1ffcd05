#!/usr/bin/env bash
# Issue 43 on a GPU machine: the unit loader (handout/harness/host/unit_loader.cu) and what
# one profiling process buys. Builds the loader, the reference's and the handout's units
# (CMake), and one unit per timed task of the reference (its file's task bits, as the
# grader's task builds have them); runs tests/gpu/unit_loader.sh; then times Nsight
# Compute (the grader's metrics, data/rubric.toml's profiled n) over the reference's timed
# tasks three ways, twice each: one process per task side by side (today's grade), one
# static driver process with case markers (today's reference profile), and one loader
# process over the four units (the kernels each case launched, from its JSON, cut ncu's
# launches). Prints seconds and the launches ncu saw against the loader's counts.
# usage: [VARIANTS=K | N_SWEEP="N1 N2 ..." | L2_ONLY=1] tools/gpu_unit_loader.sh OUTDIR
#   VARIANTS=K  instead: ncu's options and each metric group, K rounds interleaved, medians
#   N_SWEEP     instead: the loader under ncu at each n (whether ncu's cost depends on n)
#   L2_ONLY=1   the L2 hit rate's cost alone
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_unit_loader.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
build=build-units
py=python3
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSCANLAB_EMULATOR=OFF \
  > "$out/configure.log" 2>&1 || { echo "configure failed"; tail -20 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target scanlab-units scanlab-reference-unit scanlab-handout-unit \
  scanlab-reference > "$out/build.log" 2>&1 || { echo "build failed"; grep -m5 -A3 error "$out/build.log"; exit 1; }
echo "built"
bash tests/gpu/unit_loader.sh "$build/scanlab-units" "$build/scanlab-reference-unit.so" \
  "$build/scanlab-handout-unit.so" 2>&1 | tee "$out/unit_loader_test.log" | tail -12

# One unit per timed task, with its task build's driver tasks only (the grader's task_mask).
"$py" - "$out" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, ".")
from grader.config.rubric import load_rubric
from grader.grading import ncu
from grader.grading.build import task_mask
from grader.grading.prebuilt import UNIT_EXPORTS
r = load_rubric(Path("data/rubric.toml"))
out = Path(sys.argv[1])
timed = [t for t in r.tasks if t.perf]
(out / "cases.txt").write_text("".join(ncu.case_line(t.perf[0], r.profile.n) + "\n" for t in timed))
(out / "units.txt").write_text("".join(f"{t.perf[0].task} {task_mask(t.driver_tasks):#x} {' '.join(t.driver_tasks)}\n"
                                       for t in timed))
(out / "exports.txt").write_text(UNIT_EXPORTS)
(out / "metrics.txt").write_text(",".join(ncu.METRICS))
PY
units=""
# The assignment's one C++ standard (data/assignment.toml [language], via make handout).
std=$(sed -n 's/^set(SCANLAB_CXX_STANDARD \([0-9]*\))$/\1/p' handout/cmake/assignment.cmake)
while read -r task mask driver_tasks; do
  so="$out/unit-$task.so"
  nvcc -std=c++"$std" -O3 -arch=sm_90 -lineinfo -Xcompiler -fPIC -shared -cudart shared -DSCANLAB_BUILD_TASKS=${mask}ull \
    -Isolution -Ihandout handout/harness/host/student_unit.cu -o "$so" \
    -Xlinker --version-script="handout/$(cat "$out/exports.txt")" > "$out/unit-$task.log" 2>&1 &
  for t in $driver_tasks; do units="$units$t=$so;"; done
done < "$out/units.txt"
wait
echo "units: $units"
metrics=$(cat "$out/metrics.txt")
head=("$ncu" --csv --page raw --print-units base --metrics "$metrics")
cat > "$out/counts.py" <<'PY'
import json, sys
print(" ".join(f"{j['task']}:{j['status']}:{j.get('kernels')}" for j in map(json.loads, open(sys.argv[1]))))
PY
# loader VARIANT [ncu options...]: one loader process under ncu; prints its milliseconds.
loader() {
  local name=$1; shift
  local s rc
  s=$(date +%s%N)
  SCANLAB_UNITS=$units "$ncu" --csv --page raw --print-units base "$@" --log-file "$out/loader-$name.csv" \
    "$build/scanlab-units" batch --cases "$out/cases.txt" --json "$out/loader-$name.json" > "$out/loader-$name.log" 2>&1
  rc=$?
  echo "$name $(( ($(date +%s%N) - s) / 1000000 )) ms (exit $rc, ncu rows $(grep -c '^"[0-9]' "$out/loader-$name.csv"), cases $("$py" "$out/counts.py" "$out/loader-$name.json"))"
}
# medians FILE: each variant's median of the "NAME-ROUND MS ms" lines in FILE, and its rounds.
medians() {
  "$py" - "$1" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(.+)-(\d+) (\d+) ms", line)
    if m:
        runs.setdefault(m.group(1), []).append(int(m.group(3)))
for name, ms in runs.items():
    print(f"{name:20} median {statistics.median(ms) / 1000:.2f} s  ({', '.join(f'{v / 1000:.2f}' for v in ms)})")
PY
}
# The metric list without the metrics matching a pattern.
without() { echo "$metrics" | tr ',' '\n' | grep -v "$1" | paste -sd,; }
nol2=$(without '^lts__t_sector_hit_rate')
nostall=$(without 'warps_issue_stalled')
hitmiss="$nol2,lts__t_sectors_lookup_hit.sum,lts__t_sectors_lookup_miss.sum"
# The grader's own ncu options (grader/grading/ncu.py _head): no rules, no section files.
empty=$(mktemp -d)
lean=(--apply-rules no --section-folder "$empty")
# no_kernel NAME [ncu options...]: ncu's own start, over a run that launches no kernel.
no_kernel() {
  local name=$1 s; shift
  s=$(date +%s%N)
  "$ncu" --metrics gpu__time_duration.sum "$@" "$build/scanlab-units" --help > /dev/null 2>&1
  echo "$name $(( ($(date +%s%N) - s) / 1000000 )) ms"
}
# rows.py CSV: the raw page's header and kernel rows (what the reports below read).
cat > "$out/rows.py" <<'PY'
import csv, io
def rows(path):
    text = open(path).read().splitlines()
    start = next(i for i, l in enumerate(text) if l.startswith('"ID"'))
    got = list(csv.reader(io.StringIO("\n".join(l for l in text[start:] if l.startswith('"')))))
    return got[0], [r for r in got[2:] if r and r[0].strip().isdigit()]
def num(head, r, name):
    return float(r[head.index(name)].replace(",", "")) if name in head else None
PY
# VARIANTS=K: what ncu's options and each group of the grader's metrics cost: every variant
# below, K rounds interleaved (the noise between rounds is as large as what one saves), each
# one's median; ncu's start with and without the grader's options; the figures each variant
# gave (L2 hit rate, DRAM share, achieved occupancy per kernel, round 1).
if [ -n "${VARIANTS:-}" ]; then
  for round in $(seq "$VARIANTS"); do
    loader "full-$round" --metrics "$metrics"
    loader "full-norules-$round" --metrics "$metrics" --apply-rules no
    loader "full-lean-$round" --metrics "$metrics" "${lean[@]}"
    loader "full-lean-nocache-$round" --metrics "$metrics" "${lean[@]}" --cache-control none --clock-control none
    loader "full-lean-noclock-$round" --metrics "$metrics" "${lean[@]}" --clock-control none
    loader "hitmiss-lean-$round" --metrics "$hitmiss" "${lean[@]}"
    loader "no-l2-lean-$round" --metrics "$(without '^lts__')" "${lean[@]}"
    loader "no-sass-lean-$round" --metrics "$(without '^smsp__sass_')" "${lean[@]}"
    loader "no-stalls-lean-$round" --metrics "$nostall" "${lean[@]}"
    loader "time-lean-$round" --metrics gpu__time_duration.sum "${lean[@]}"
    no_kernel "no-kernel-$round"
    no_kernel "no-kernel-lean-$round" "${lean[@]}"
  done 2>&1 | tee "$out/variants.txt" | grep -o "^[a-z0-9-]* [0-9]* ms"
  grep -h "==ERROR==" "$out"/loader-*.csv "$out"/loader-*.log | sort | uniq -c | head -5
  medians "$out/variants.txt"
  "$py" - "$out" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from rows import rows, num
for variant in ("full", "full-lean", "full-lean-nocache", "full-lean-noclock", "hitmiss-lean"):
    head, body = rows(f"{sys.argv[1]}/loader-{variant}-1.csv")
    out = []
    for r in body:
        hit = num(head, r, "lts__t_sector_hit_rate.pct")
        if hit is None:
            h, m = num(head, r, "lts__t_sectors_lookup_hit.sum"), num(head, r, "lts__t_sectors_lookup_miss.sum")
            hit = 100 * h / max(1, h + m)
        dram = num(head, r, "dram__throughput.avg.pct_of_peak_sustained_elapsed")
        occ = num(head, r, "sm__warps_active.avg.pct_of_peak_sustained_active")
        out.append(f"{hit:.0f}/{dram:.0f}/{occ:.0f}")
    print(f"{variant:18} L2 hit/DRAM/achieved % a kernel: {' '.join(out)}")
PY
  exit 0
fi
# N_SWEEP="N1 N2 ...": whether ncu's time depends on n: the full set, the time alone and no
# ncu at each profiled n, and ncu's start; two rounds.
if [ -n "${N_SWEEP:-}" ]; then
  cp "$out/cases.txt" "$out/cases-rubric.txt"
  for round in 1 2; do
    for n in $N_SWEEP; do
      sed "s/--n [0-9]*/--n $n/" "$out/cases-rubric.txt" > "$out/cases.txt"
      loader "n$n-full-$round" --metrics "$metrics"
      loader "n$n-full-apponly-$round" --metrics "$metrics" --target-processes application-only
      loader "n$n-time-$round" --metrics gpu__time_duration.sum
      s=$(date +%s%N)
      SCANLAB_UNITS=$units "$build/scanlab-units" batch --cases "$out/cases.txt" --json "$out/plain.json" > /dev/null 2>&1
      echo "n$n-no-ncu-$round $(( ($(date +%s%N) - s) / 1000000 )) ms"
    done
    no_kernel "no-kernel-$round"
  done 2>&1 | tee "$out/sweep.txt" | grep -o "^[a-z0-9-]* [0-9]* ms"
  medians "$out/sweep.txt"
  cp "$out/cases-rubric.txt" "$out/cases.txt"
  exit 0
fi
for round in $([ -n "${L2_ONLY:-}" ] || echo 1 2); do
  script=""; k=0
  while read -r line; do
    echo "$line" > "$out/case-$k.txt"
    script="$script '$PWD/$build/scanlab-reference' batch --cases '$out/case-$k.txt' --json '$out/case-$k.json' > /dev/null 2>&1 &"
    k=$((k + 1))
  done < "$out/cases.txt"
  s=$(date +%s%N)
  "$ncu" --csv --page raw --print-units base --metrics "$metrics" --target-processes all \
    --log-file "$out/side-$round.csv" /bin/sh -c "$script wait" > /dev/null 2>&1
  echo "round $round: side by side (today's grade) $(( ($(date +%s%N) - s) / 1000000 )) ms"
  s=$(date +%s%N)
  "$ncu" --csv --page raw --print-units base --metrics "$metrics" --log-file "$out/marked-$round.csv" \
    "$build/scanlab-reference" batch --cases "$out/cases.txt" --json "$out/marked.json" --mark-cases > /dev/null 2>&1
  echo "round $round: one marked process $(( ($(date +%s%N) - s) / 1000000 )) ms"
  loader "full-$round" --metrics "$metrics"
  loader "no-l2-hit-$round" --metrics "$nol2"
  loader "no-stalls-$round" --metrics "$nostall"
  loader "no-cache-control-$round" --metrics "$metrics" --cache-control none --clock-control none
  loader "time-only-$round" --metrics gpu__time_duration.sum
done
# The L2 hit rate's cost: ncu's metric (three replay passes alone) against the counts it
# is made of; each variant's replay passes (ncu's "N passes" of the reduce's first
# kernel) and seconds. L2_ONLY=1 runs this part alone.
for l2 in lts__t_sector_hit_rate.pct lts__t_sectors_lookup_hit.sum,lts__t_sectors_lookup_miss.sum \
          lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum \
          lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum \
          none; do
  m=$nol2; [ "$l2" = none ] || m="$nol2,$l2"
  s=$(date +%s%N)
  SCANLAB_UNITS=$units "$ncu" --csv --page raw --print-units base --metrics "$m" --log-file "$out/l2.csv" \
    "$build/scanlab-units" batch --cases "$out/cases.txt" --json "$out/l2.json" > "$out/l2.log" 2>&1
  ms=$(( ($(date +%s%N) - s) / 1000000 ))
  passes=$(grep -ho "[0-9]* passes" "$out/l2.log" "$out/l2.csv" | sort | uniq -c | paste -sd' ')
  err=$(grep -h "==ERROR==" "$out/l2.log" "$out/l2.csv" | head -1)
  echo "L2 as $l2: $ms ms; passes $passes $err"
  [ "$l2" = none ] || "$py" - "$out" "$l2" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from rows import rows, num
head, body = rows(f"{sys.argv[1]}/l2.csv")
names = sys.argv[2].split(",")
for r in body:
    v = [num(head, r, n) for n in names]
    rate = v[0] if len(v) == 1 else 100 * (v[0] + (v[2] if len(v) > 2 else 0)) / max(1, sum(v))
    print(f"    {r[4][:40]:40} {rate:.1f}%")
PY
done
s=$(date +%s%N)
SCANLAB_UNITS=$units "$build/scanlab-units" batch --cases "$out/cases.txt" --json "$out/plain.json" > /dev/null 2>&1
echo "the loader without ncu: $(( ($(date +%s%N) - s) / 1000000 )) ms"
grep -h "==ERROR==\|==WARNING==" "$out"/loader-*.csv | sort | uniq -c | head -5
