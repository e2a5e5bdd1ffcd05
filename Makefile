# scanlab: the front door of the repository.
#   make grader         install the grader alone into .venv, without root (Python >= 3.11)
#   make test           install what is missing, build everything, run every test
#                       (C++ via CTest, the grader's pytest through CTest too)
#   make                build the reference and handout drivers (GPU and emulator)
#   make bench          reference reduce and scan against CUB (the toolkit's and the newest
#                       CCCL's from PyPI) and a device copy (GPU)
#   make plot           the reference's sweep of every task, CUB's, the baselines and the
#                       copy over n = 2^10 .. 2^28, drawn into build/sweep.png (GPU)
#   make handout        regenerate handout/student, handout/harness/generated/, the handout README points table
#   make grade [SUBMISSION=path]   grade a submission (default: the reference solution)
#   make gradescope     build the Gradescope autograder zip
BUILD ?= build
CMAKE_FLAGS ?=
PYTHON ?= python3

.PHONY: all deps grader test bench plot handout grade gradescope clean

all: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

deps:
	tools/install_deps.sh

grader:
	tools/install_deps.sh --grader

test: deps
	$(MAKE) all
	ctest --test-dir $(BUILD) --output-on-failure -j $(shell nproc)

# The newest CCCL's CUB beside the toolkit's: bench/cccl_setup.sh fetches the
# nvidia-cuda-cccl wheel (headers only) into $(BUILD)/cccl (CCCL_WHEEL=path: a wheel or a
# folder of wheels, for a machine without network; CCCL_DIR=path: headers); without it,
# or if that build fails, the toolkit's CUB alone.
bench: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j --target scanlab-bench
	@cccl=$$(bench/cccl_setup.sh $(BUILD)/cccl); \
	if [ -n "$$cccl" ] && cmake -S . -B $(BUILD) -DSCANLAB_CCCL_INCLUDE="$$(cd "$$cccl" && pwd)" > /dev/null \
	    && cmake --build $(BUILD) -j --target scanlab-bench-cccl \
	    && $(BUILD)/bench/scanlab-bench-cccl --cub-only $(BUILD)/bench/cub-newest.csv; then \
	  $(BUILD)/bench/scanlab-bench --newest-cub $(BUILD)/bench/cub-newest.csv; \
	else \
	  echo "make bench: no newest CCCL (see above): the toolkit's CUB only"; \
	  $(BUILD)/bench/scanlab-bench; \
	fi

# The handout's plot script, with the reference's kernels named "reference" and CUB's rows.
PLOT_PYTHON = $(shell [ -x .venv/bin/python ] && echo .venv/bin/python || echo $(PYTHON))
plot: all
	@tasks=$$($(BUILD)/scanlab-reference list tasks); \
	for task in $$tasks; do \
	  $(BUILD)/scanlab-reference sweep --task $$task --label reference \
	    --csv $(BUILD)/sweep-$$task.csv || exit $$?; \
	done; \
	$(BUILD)/bench/scanlab-bench --sweep $(BUILD)/sweep-cub.csv || exit $$?; \
	$(PLOT_PYTHON) handout/tools/plot_sweep.py $$(for t in $$tasks; do echo $(BUILD)/sweep-$$t.csv; done) \
	  $(BUILD)/sweep-cub.csv --out $(BUILD)/sweep.png

handout:
	$(PYTHON) tools/make_handout.py

# The grader (grader/README.md). GRADE_FLAGS passes more options, e.g.
# make grade SUBMISSION=subs/alice.zip GRADE_FLAGS="--seed 12345 --backend emulator"
SUBMISSION ?= solution
GRADE_FLAGS ?=
grade:
	$(PYTHON) -m grader grade $(SUBMISSION) $(GRADE_FLAGS)

gradescope:
	$(PYTHON) -m grader gradescope-zip --out dist/scanlab-autograder.zip

clean:
	rm -rf $(BUILD)
