# The two commands a newcomer needs: `make run` and `make test`. Everything installs into .venv.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.neuroneval-installed
CORES ?= all
# Before Snakemake starts: clear the lock a killed run left in .snakemake/locks, or stop if Snakemake is running here.
UNLOCK := $(BIN)/python tools/unlock_if_stale.py

.PHONY: setup run paper paper-dryrun test lint bench dryrun clean-results repro pull report chromium \
	slurm-up slurm-down openssh-server test-cluster test-faults

setup: $(STAMP)

# Pinned install: torch/torchvision come from this machine's disk; constraints.txt locks every other package.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	@$(UNLOCK) $(BIN)/snakemake
	$(BIN)/snakemake --cores $(CORES) results/table4.csv

# Paper profile on your own datasets and checkpoints (docs/paper_profile.md). PAPER_PATHS: your overlay of paths,
# e.g. `make paper PAPER_PATHS=my_paths.yaml`. gpu=1: one model job on the GPU at a time.
PAPER_PATHS ?=
paper: $(STAMP)
	@$(UNLOCK) $(BIN)/snakemake
	$(BIN)/snakemake results/table4.csv --cores $(CORES) --resources gpu=1 --configfile profiles/paper.yaml $(PAPER_PATHS)

paper-dryrun: $(STAMP)
	@$(UNLOCK) --allow-running $(BIN)/snakemake
	$(BIN)/snakemake results/table4.csv -n --configfile profiles/paper.yaml $(PAPER_PATHS)

# The crowd task-page test drives Debian's headless Chromium; install it once where it is missing (as root).
chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# Random order (pytest-randomly): each run draws a seed and prints it; SEED=N repeats that order (docs/testing.md).
SEED ?= $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
# `?=` expands at every use (three different draws); `:=` fixes the one draw (a SEED=N given to make wins).
SEED := $(SEED)
TEST_ARGS ?=
test: $(STAMP) chromium
	@echo "make test: random order, seed $(SEED) (make test SEED=$(SEED) repeats it)"
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --randomly-seed=$(SEED) $(TEST_ARGS)

# Cluster extras (the SLURM executor plugin, DVC's SSH remote) into the same venv.
CLUSTER_STAMP := $(VENV)/.neuroneval-cluster-installed
$(CLUSTER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,slurm,ssh]'
	touch $(CLUSTER_STAMP)

# A single-node SLURM cluster on this machine (scripts/slurm-local.sh; as root: installs slurm and munge if missing).
slurm-up: $(CLUSTER_STAMP)
	scripts/slurm-local.sh up

slurm-down:
	scripts/slurm-local.sh down

# The SSH remote test starts Debian's OpenSSH server on 127.0.0.1; install it once where it is missing (as root).
openssh-server:
	@test -x /usr/sbin/sshd || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server)

# tests/cluster (marker `cluster`, left out of `make test`): the tiny Table 4 built through sbatch on the local
# cluster and compared with a local build; a DVC round trip over SSH. The cluster stays up (make slurm-down).
test-cluster: $(CLUSTER_STAMP) openssh-server slurm-up
	$(BIN)/python -m pytest -q -s -m cluster tests/cluster

# tests/workflow/test_faults.py (marker `faults`, left out of `make test`): the tiny build of `make run`'s target,
# killed at several points (SIGTERM/SIGKILL, Snakemake alone or its process group), resumed by `make run`'s commands
# alone and compared byte for byte with an uninterrupted build. Slow: two tiny builds.
test-faults: $(STAMP)
	$(BIN)/python -m pytest -q -s -m faults tests/workflow/test_faults.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow/rules

dryrun: $(STAMP)
	@$(UNLOCK) --allow-running $(BIN)/snakemake
	$(BIN)/snakemake -n results/table4.csv

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_metrics.py

clean-results:
	rm -rf results .snakemake/metadata

# Fetch what the remote has (naming the stages it lacks), restore Snakemake's records of the pulled outputs, then
# order their timestamps along the DAG (neuroneval.pipeline.share).
pull: $(STAMP)
	@$(UNLOCK) $(BIN)/snakemake
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python -m neuroneval.pipeline.share pull

# Snakemake's report of whatever the build holds (after `make run`: Table 4; after every stage: every table, figure
# and viewer page), one offline HTML file; REPORT=results/report.zip writes the zip form (neuroneval.snakemake_report).
REPORT ?= results/report.html
report: $(STAMP)
	@$(UNLOCK) $(BIN)/snakemake
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python -m neuroneval.snakemake_report $(REPORT)

repro: $(STAMP)
	@$(UNLOCK) $(BIN)/snakemake
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/dvc repro

# Mutation testing (docs/mutation_testing.md; Cosmic Ray, not part of `make test`): each decisive module of
# tools/mutants.py's MODULE_TESTS is mutated in a scratch copy (.mutants/tree) and only its mapped tests run against
# each mutant. `make mutants`: every module (hours on two cores); `make mutants-changed`: modules changed since
# main's merge-base; MUTANTS=src/neuroneval/metrics/binarize.py names modules. Both end with .mutants/report.md.
MUTANTS ?=
.PHONY: mutants mutants-changed mutants-report
mutants: $(STAMP)
	nice -n 19 $(BIN)/python tools/mutants.py $(MUTANTS)
	$(BIN)/python tools/mutants_report.py -o .mutants/report.md
	@cat .mutants/report.md

mutants-changed: $(STAMP)
	nice -n 19 $(BIN)/python tools/mutants.py --changed
	@test ! -d .mutants || $(BIN)/python tools/mutants_report.py -o .mutants/report.md

mutants-report:
	$(BIN)/python tools/mutants_report.py -o .mutants/report.md
	@cat .mutants/report.md
