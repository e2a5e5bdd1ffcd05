#!/usr/bin/env bash
# On a GPU machine: the fixtures that keep state between launches, and the honest ones
# whose device code holds a printf format or a const table (issue 45, item 3), graded with
# the GPU backend. The driver restores the student unit's device variables before every
# launch (handout/harness/host/student_state.h): the counters cannot count (correct),
# printf and const tables are simply allowed (correct), a name the driver cannot find in
# the module stops its cases with an error that names it (the line to look for if
# function-scope statics or string literals cannot be looked up on this driver). Then
# one timed grade of the counter that breaks its result if its state survives (every
# timed repetition is verified), and a check that no report holds a raw control
# character (issue 45, item 6).
#
# usage: tools/gpu_state.sh OUTDIR
#   prints a line per fixture: its verdicts, the expected ones (fixture.toml, [expect.cuda]
#   first), OK or DIFFERS, and the messages of every task that is not correct; exit 1 if
#   any differs. Logs and reports in OUTDIR. About 5 minutes on an H100.
#   BACKEND=emulator (and FIXTURES="a b ...") runs the same on the CPU emulator: how the
#   script itself is tried without a GPU; CACHE=DIR: the grader's cache folder.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_state.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
backend=${BACKEND:-cuda}
fixtures=(attack_state_counter launch_counter_reduce memo_reduce memo_scan attack_template_static
          input_counter_reduce tile_state_counter_lookback exit_destructor attack_arg_constructor
          honest_printf_kernel honest_device_const_table honest_static_const_local
          honest_constant_table control_characters reference)
[ -z "${FIXTURES:-}" ] || read -r -a fixtures <<< "$FIXTURES"
grade_flags=(--backend "$backend")
[ "$backend" != cuda ] || grade_flags+=(--cuda-arch "${CUDA_ARCH:-90}")
[ -z "${CACHE:-}" ] || grade_flags+=(--cache "$CACHE")

[ "$backend" != cuda ] || { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader;
                            nvcc --version | tail -1; } | tee "$out/machine.txt"
rm -rf "$out/class" "$out/class.parts" "$out/batch"
python3 tools/fixtures.py class "$out/class" "${fixtures[@]}" > "$out/compose.log" 2>&1 \
  || { cat "$out/compose.log"; exit 2; }
echo "grading ${#fixtures[@]} fixtures ($backend (correctness; log: $out/batch.log)"
python3 -m grader batch "$out/class" --out "$out/batch" --no-perf "${grade_flags[@]}" \
  > "$out/batch.log" 2>&1
echo "batch exit status: $?"
echo "one timed grade: attack_state_counter (log: $out/timed.log)"
python3 -m grader grade "$out/class/attack_state_counter" --out "$out/timed" "${grade_flags[@]}" \
  > "$out/timed.log" 2>&1
echo "timed grade exit status: $?"

python3 - "$out" "$backend" "${fixtures[@]}" <<'EOF'
import json, re, sys
from pathlib import Path
sys.path.insert(0, "tools")
from fixtures import load_fixture
from grader.results import SubmissionResult, from_jsonable

out, backend, names = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
raw = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
differs = 0
for name in names:
    found = out / "batch" / "submissions" / name / "results.json"
    if not found.is_file():
        print(f"{name}: NO RESULT (see batch.log)")
        differs += 1
        continue
    r = from_jsonable(SubmissionResult, json.loads(found.read_text()))
    verdicts = {t.name: t.verdict for t in r.tasks}
    verdicts["integration"] = r.integration.verdict
    want = load_fixture(name).expected(backend)
    bad = {k: v for k, v in want.items() if k in verdicts and v != "any" and verdicts[k] != v}
    differs += bool(bad) or bool(r.error)
    print(f"{name}: {'OK' if not bad else 'DIFFERS'} {verdicts}" + (f" expected {want}" if bad else "")
          + (f" ERROR {r.error}" if r.error else ""))
    for t in r.tasks:
        if t.verdict not in ("correct", "not_attempted"):
            print(f"    {t.name}: {t.message[:400]}")
            for v in t.violations[:3]:
                print(f"      {v.file}:{v.line}: {v.message[:200]}")
            for c in [c for c in t.cases if c.status != "pass"][:2]:
                print(f"      {c.status}: {c.summary[:200]} {c.details[:300]}")
timed = out / "timed" / "results.json"
if timed.is_file():
    r = from_jsonable(SubmissionResult, json.loads(timed.read_text()))
    t = next(t for t in r.tasks if t.name == "reduce")
    print(f"timed attack_state_counter: reduce {t.verdict}, performance {t.perf_status}: "
          f"{t.perf_message[:300]}")
    for p in t.perf:
        print(f"    {p.case.label if hasattr(p.case, 'label') else p.case}: {p.status} {p.message[:300]}")
else:
    print("timed attack_state_counter: NO RESULT (see timed.log)")
    differs += 1
hits = [f"{p.relative_to(out)}: {m.group()!r}" for p in sorted(out.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".txt", ".md", ".html", ".xml", ".csv")
        and "cache" not in p.parts
        for m in raw.finditer(p.read_bytes().replace(b"\r\n", b"\n"))]   # (CSV lines end in CRLF)
print(f"raw control characters in the reports: {len(hits)}" + "".join(f"\n    {h}" for h in hits[:10]))
sys.exit(1 if differs or hits else 0)
EOF
