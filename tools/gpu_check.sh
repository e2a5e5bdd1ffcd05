#!/usr/bin/env bash
# Everything that needs a GPU, in one go, for a maintainer on a GPU machine (CI has
# none): build for the GPU, every test (CTest: the GPU suite up to 2^28, the
# compute-sanitizer run, emulator/GPU agreement, the grader's GPU end-to-end tests),
# `make bench`, the emulator's throughput, the time to grade one submission, a GPU
# batch of ten fixture submissions, and `make grade`.
#
# usage: tools/gpu_check.sh [LOG_DIR] [STEP ...]
#   LOG_DIR  one log per step (default build/gpu-check); a summary line per step on stdout
#   STEP     run only these steps (default: all, in this order):
#            info configure build ctest bench bench-emulator bench-grade batch grade
#            and, only when named (ctest covers the first; the second grades five times):
#            timing-cheats  the timing-cheat fixtures on the GPU (test_e2e_gpu.py -k
#                           timing_cheat): none earns performance points
#            self-grade     the reference graded against itself five times (bench_grade.py
#                           --reps 5): full marks, slowdowns near 1, the time of a grade
# Needs what `make test` needs (tools/install_deps.sh) plus nvcc and compute-sanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=${1:-build/gpu-check}
shift || true
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(info configure build ctest bench bench-emulator bench-grade batch grade)
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
build=build
failed=0

batch_of_ten() {
  # The batch of ten of tests/grader/test_batch.py (tools/fixtures.py BATCH_OF_TEN), on the GPU.
  local class=$build/gpu-check-class
  rm -rf "$class" "$build/gpu-check-parts"
  python3 tools/fixtures.py class "$class" --parts "$build/gpu-check-parts" || return
  python3 -m grader batch "$class" --out "$logs/batch"
}

run_step() {
  case $1 in
    info) nvidia-smi && nvcc --version && cmake --version && g++ --version && python3 --version &&
          command -v compute-sanitizer ;;
    configure) cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_FLAGS:-} ;;
    build) cmake --build "$build" -j "$(nproc)" ;;
    ctest) ctest --test-dir "$build" --output-on-failure -j "$(nproc)" ;;
    bench) make bench BUILD="$build" ;;
    bench-emulator) "$build/tests/emulator/bench_emulator" ;;
    bench-grade) python3 tools/bench_grade.py --reps 2 --json "$logs/bench-grade.json" ;;
    batch) batch_of_ten ;;
    grade) make grade GRADE_FLAGS="--out $logs/grade" ;;
    timing-cheats) python3 -m pytest -q -s tests/grader/test_e2e_gpu.py -k timing_cheat ;;
    self-grade) python3 tools/bench_grade.py --reps 5 --target 25 --json "$logs/self-grade.json" \
                  ${SCANLAB_TEST_CACHE:+--cache "$SCANLAB_TEST_CACHE"} ;;
    *) echo "unknown step: $1"; return 2 ;;
  esac
}

for s in "${steps[@]}"; do
  start=$SECONDS
  run_step "$s" >"$logs/$s.log" 2>&1
  rc=$?
  printf '%-15s exit %-3s %5s s\n' "$s" "$rc" "$((SECONDS - start))"
  [ $rc -eq 0 ] || { failed=$((failed + 1)); tail -n 25 "$logs/$s.log" | sed 's/^/    /'; }
done
echo "steps failed: $failed"
exit $((failed > 0))
