#!/usr/bin/env bash
# The unit loader (handout/harness/host/unit_loader.cu) on the GPU, the grader's one
# profiling process: the reference's student unit and the handout's, each a shared object,
# loaded side by side, every task run from the unit SCANLAB_UNITS names for it.
# - Every driver task from the reference's unit passes, and its JSON line says how many
#   kernels the case launched (the count that cuts a profiler's launches into cases).
# - scan from the handout's unit is its placeholder ("not_implemented") while
#   scan-exclusive from the reference's unit, loaded beside it, passes, and the other way
#   round: no symbol of one unit stands in for the other's (RTLD_LOCAL, one export each).
# - A task that no unit is named for stops with a message.
# Exits with the driver's no-GPU status (CTest: skipped) without a GPU.
# usage: unit_loader.sh <loader> <reference unit> <handout unit>
set -u
loader=$1 reference=$2 handout=$3
. "$(dirname "$0")/require_gpu.sh"; require_gpu "$loader"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# status TASK...: each case's "status" and "kernels" from the batch's JSON lines, in order.
statuses() {
  python3 -c 'import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    print(j["task"], j["status"], j.get("kernels", "none"))' "$1"
}

tasks=$("$loader" list tasks)
units=""
for task in $tasks; do units="$units$task=$reference;"; done
: > "$work/all.txt"
for task in $tasks; do echo "--task $task --op add-i32 --n 300007 --block 256" >> "$work/all.txt"; done
SCANLAB_UNITS=$units "$loader" batch --cases "$work/all.txt" --json "$work/all.json" > "$work/all.log" 2>&1 \
  || fail "the reference's units: exit $? ($(tail -1 "$work/all.log"))"
while read -r task status kernels; do
  [ "$status" = pass ] || fail "$task from the reference's unit: $status"
  case $kernels in ''|none|0|*[!0-9]*) fail "$task: no kernel count ($kernels)";; esac
  echo "$task: $status, $kernels kernel(s)"
done < <(statuses "$work/all.json")
[ "$(statuses "$work/all.json" | wc -l)" -eq "$(echo "$tasks" | wc -w)" ] || fail "not one JSON line per task"

# Side by side: scan and scan-exclusive (one student file) from two units, the handout's
# (its scan is "not implemented") and the reference's, both ways round: each unit answers
# for its own task only.
printf -- '--task scan --op add-i32 --n 5000 --block 256\n--task scan-exclusive --op add-i32 --n 5000 --block 256\n' \
  > "$work/mixed.txt"
for order in "$handout $reference" "$reference $handout"; do
  set -- $order
  SCANLAB_UNITS="scan=$1;scan-exclusive=$2" "$loader" batch --cases "$work/mixed.txt" --json "$work/mixed.json" \
    > "$work/mixed.log" 2>&1
  got=$(statuses "$work/mixed.json" | awk '{ print $1 "=" $2 }' | paste -sd' ')
  want="scan=$([ "$1" = "$handout" ] && echo not_implemented || echo pass)"
  want="$want scan-exclusive=$([ "$2" = "$handout" ] && echo not_implemented || echo pass)"
  [ "$got" = "$want" ] && echo "side by side: $got" || fail "scan from $1, scan-exclusive from $2: $got, not $want"
done

# No unit for the task: a message, and no case passes.
echo "--task reduce --op add-i32 --n 5000 --block 256" > "$work/none.txt"
out=$(SCANLAB_UNITS="scan=$reference" "$loader" batch --cases "$work/none.txt" --json "$work/none.json" 2>&1)
echo "$out" | grep -q "no unit for task reduce" || fail "a task without a unit: $(echo "$out" | tail -2)"
grep -q '"status": "pass"' "$work/none.json" 2>/dev/null && fail "a task without a unit passed"

[ "$failures" -eq 0 ] && echo "unit loader: all checks passed" || { echo "$failures failure(s)"; exit 1; }
