#!/usr/bin/env bash
# Issue 45 (items 2, 4, 5, 7) on a GPU machine: the code rules decided on the compiled
# program give every honest fixture its correctness points and refuse every attack, on the
# GPU as on the emulator.
#
# usage: tools/gpu_rules.sh OUTDIR
#   OUTDIR/e2e_gpu.log      the fixtures' verdicts graded on the GPU (test_e2e_gpu.py):
#                           honest_* full marks, attack_* / hidden calls refused or wrong
#   OUTDIR/build_cuda.log   nvcc's objects and PTX: host code only where it runs,
#                           forbidden calls by symbol, placeholders from the PTX, and one
#                           rule verdict on both backends (test_build_cuda.py)
#   OUTDIR/e2e_gpu_huge.log the reference and reduce_count_wraps_2_32 graded with the n >= 2^31
#                           cases (issue 58: the boundary family's 2^31 and 2^32)
#   OUTDIR/summary.txt      one line per log: passed/failed/skipped counts
# Builds for the GPU it finds (sm_90 on an H100); about 6 minutes with 16 cores. Needs tools/install_deps.sh's
# .venv and nvcc. The printf and const-table fixtures pass on the GPU once item 3
# (restoring device globals instead of refusing them) is merged.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_rules.sh OUTDIR}
mkdir -p "$out"
# The fixtures issues 45 and 58 added or whose rule changed (the whole corpus: make test on a
# GPU): one extended regular expression a line.
fixtures=$(ls tests/fixtures/submissions | grep -E -f <(cat <<'PATTERNS'
^honest_(printf_kernel|device_const_table|static_const_local|host_device_helper|libc_|disabled_debug|dead_placeholder|baseline_variable|device_assert|dynamic_shared|mul24|warp_masks)
^attack_(fnptr_launch|stream|placeholder_token|wrapped_bonus)$
^(macro_fopen|paren_getenv|fnptr_system|reference|handout)$
^honest_lookback_per_lane_spin$
^(hang_block_1024|wrong_block_1024)$
^attack_placeholder_(table|virtual|volatile|template)$
^(honest_sibling_include|attack_constructor_attribute|attack_thread_local|cxx20_concept|honest_templates_constexpr)$
^(reduce_block_512_full_warps|lookback_tile_multiple|reduce_top_power|reduce_count_wraps_2_32|honest_boundary_tiles)$
PATTERNS
))
selection=$(echo $fixtures | sed 's/ / or /g')
.venv/bin/pytest -q -p no:cacheprovider tests/grader/test_e2e_gpu.py -rfEs -k "test_fixture_verdicts_on_gpu and ($selection)" \
  > "$out/e2e_gpu.log" 2>&1
# Issue 58 item 5: the boundary family's n >= 2^31 sizes (the reduce at 2^32: a 32-bit count
# that wraps there), in the session with the n >= 2^31 cases.
.venv/bin/pytest -q -p no:cacheprovider tests/grader/test_e2e_gpu.py \
  -k "test_drawn_cases_past_2_31_give_their_verdicts and (reference or reduce_count_wraps_2_32)" \
  > "$out/e2e_gpu_huge.log" 2>&1
.venv/bin/pytest -q -p no:cacheprovider tests/grader/test_build_cuda.py \
  -k "compiled_checks or placeholder_call or (both_backends and ($selection))" > "$out/build_cuda.log" 2>&1
for log in e2e_gpu e2e_gpu_huge build_cuda; do
  echo "$log: $(tail -n 1 "$out/$log.log")"
done | tee "$out/summary.txt"
