#!/usr/bin/env bash
# Is a task's build fair to the timing? (issue 45, item 1; grader/contract/README.md)
#
# A task is now built with its file alone: the other student files are their contract
# (declarations, the grader's scanIncWarp, task 2's kernel from the reference unit linked
# apart). This grades the reference's own files as a submission, a comment added to each
# (the bonus included), so that every task is compiled the new way (the student unit's
# path of the grader: `build task N`), and times it, on the same GPU and in the same run,
# against the reference's whole build (the old way: one unit with every reference file).
# Twice, for the noise. Prints, for every timed case: the reference's time the old way,
# the new way, and new/old (1.00: as fast; the grade must stay within 0.97-1.03), then
# each build's seconds (issue 47: <= 6 s a task build).
#
# usage: tools/gpu_units.sh OUTDIR     (an H100: about 4-6 minutes; -arch=sm_90)
# OUTDIR gets prepare.log, grade-<i>.log, grade-<i>/ (results.json, the reports) and
# units.txt (the table printed).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_units.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
arch=${CUDA_ARCH:-90}
cache="$out/cache"
common=(--backend cuda --cuda-arch "$arch" --cache "$cache")

{ nvidia-smi -L; nvcc --version | tail -1; } | tee "$out/gpu.txt"
echo "== prepare (the reference, the prebuilt harness and its reference unit, the baselines)"
start=$(date +%s)
$py -m grader prepare "${common[@]}" >"$out/prepare.log" 2>&1 || { tail -40 "$out/prepare.log"; exit 1; }
echo "   $(( $(date +%s) - start )) s"

# The reference's files, each with a comment added: no task's build is the cached reference.
sub="$out/submission"
rm -rf "$sub"
$py - "$sub" <<'EOF'
import shutil, sys
from pathlib import Path
dest = Path(sys.argv[1]) / "student"
dest.mkdir(parents=True)
for f in sorted(Path("solution/student").glob("*.cuh")):
    (dest / f.name).write_bytes(f.read_bytes() + b"\n// graded as a submission (tools/gpu_units.sh)\n")
EOF

for i in 1 2; do
  echo "== grade $i: the reference's files, every task built the new way"
  start=$(date +%s)
  $py -m grader grade "$sub" "${common[@]}" --seed "$i" --out "$out/grade-$i" -q >"$out/grade-$i.log" 2>&1 ||
    { tail -40 "$out/grade-$i.log"; exit 1; }
  echo "   $(( $(date +%s) - start )) s"
done

$py - "$out" <<'EOF' | tee "$out/units.txt"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print(f"{'grade':>5}  {'task':<14} {'case':<40} {'old ms':>9} {'new ms':>9} {'new/old':>8}")
worst = []
for i in (1, 2):
    r = json.loads((out / f"grade-{i}" / "results.json").read_text())
    for t in r["tasks"]:
        for p in t.get("perf", []):
            c = p["case"]
            case = f"{c['task']} {c['op']} n={c['n']} block={c['block']}"
            old, new = p.get("reference_ms"), p.get("student_ms")
            ratio = new / old if old and new else None
            if ratio:
                worst.append(ratio)
            print(f"{i:>5}  {t['name']:<14} {case:<40} {old or float('nan'):9.4f} "
                  f"{new or float('nan'):9.4f} {ratio or float('nan'):8.3f}  {p['status']}")
print()
if worst:
    print(f"new/old over every timed case: min {min(worst):.3f}, max {max(worst):.3f} "
          "(fair: within 0.97-1.03)")
r = json.loads((out / "grade-1" / "results.json").read_text())
print("verdicts:", ", ".join(f"{t['name']} {t.get('verdict', t.get('status'))}" for t in r["tasks"]),
      f"| score {r.get('score')} / {r.get('max_score')}")
print("build seconds (grade 1):", ", ".join(
    f"{t['name']} {t['build']['seconds']:.1f}" for t in r["tasks"] if t.get("build")))
EOF
