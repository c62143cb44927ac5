# horus — the one entry point for people and CI.
#
#   make demo    run the demo robot (installs what it needs first)
#   make test    every check the project has; CI runs exactly this (.ci/run)
#   make bench   full benchmarks, JSON into bench-results/
#
# Build artefacts live outside the clone so that fresh clones (CI) reuse them.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

CARGO            ?= cargo
PYTHON           ?= python3
CARGO_TARGET_DIR ?= $(HOME)/.cache/horus-target
export CARGO_TARGET_DIR
# loom builds with `--cfg loom`; a separate target dir keeps it from invalidating the normal one.
LOOM_TARGET_DIR  ?= $(CARGO_TARGET_DIR)-loom
# Scratch space for smoke-test outputs (JSON written by the benchmark binaries).
SMOKE_DIR        ?= $(CARGO_TARGET_DIR)/smoke
BENCH_DIR        ?= bench-results
VENV             ?= .venv

# Debian packages the build needs, as `command:package` pairs; installed only when the command
# is missing: a C compiler and libc headers (the `cc` crate builds C), python3 (JSON checks).
APT_NEEDS := cc:build-essential python3:python3

# sudo only when not root and sudo exists (root needs none).
SUDO := $(shell [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && echo sudo)

# The phases of `make test`, in order; the first failure stops the run.
TEST_PHASES := test-fmt test-clippy test-unit test-loom test-bench-smoke test-sched-smoke \
               test-demo-smoke test-python

.PHONY: help setup setup-python demo test bench fmt lint clean $(TEST_PHASES)

help:
	@echo "make demo    run the demo robot"
	@echo "make test    fmt, clippy, tests, loom models, benchmark/demo smoke, Python tests"
	@echo "make bench   full pingpong benchmark -> $(BENCH_DIR)/pingpong.json"
	@echo "make fmt | lint | clean | setup | setup-python"
	@echo "(build dir: $(CARGO_TARGET_DIR))"

# ---------------------------------------------------------------------------
# Setup: idempotent and silent when everything is already there.

setup:
	@command -v $(CARGO) >/dev/null 2>&1 || { \
	  echo "setup: cargo not found. Install the Rust toolchain (https://rustup.rs) and retry." >&2; exit 1; }
	@missing=""; for pair in $(APT_NEEDS); do \
	  cmd=$${pair%%:*}; pkg=$${pair#*:}; \
	  command -v $$cmd >/dev/null 2>&1 || dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  command -v apt-get >/dev/null 2>&1 || { echo "setup: missing:$$missing (no apt-get here; install them by hand)" >&2; exit 1; }; \
	  echo "setup: installing$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@for comp in fmt clippy; do \
	  $(CARGO) $$comp --version >/dev/null 2>&1 || { \
	    echo "setup: 'cargo $$comp' missing: rustup component add $${comp/fmt/rustfmt}" >&2; exit 1; }; \
	done

# Python environment for the bindings: .venv with maturin, pytest, numpy, mypy
# (python/python.mk, idempotent).
setup-python: setup py-setup

# ---------------------------------------------------------------------------
# Demo

demo: setup py-build
	HORUS_PYTHON=$(abspath $(PY)) $(CARGO) run --release -p horus-demo --bin horus-demo

# ---------------------------------------------------------------------------
# Tests. Each phase is its own target (`make test-loom` runs just that one);
# `make test` runs them in order, prints a header and the time of each, and a summary.

test: setup
	@summary=""; total_start=$$(date +%s); \
	for phase in $(TEST_PHASES); do \
	  printf '\n==> [%s] make %s\n' "$$(date +%T)" "$$phase"; \
	  start=$$(date +%s); \
	  if $(MAKE) $$phase; then status=ok; else status=FAILED; fi; \
	  secs=$$(( $$(date +%s) - start )); \
	  printf '<== make %s: %s in %ss\n' "$$phase" "$$status" "$$secs"; \
	  summary="$$summary$$(printf '  %-18s %-6s %5ss' "$$phase" "$$status" "$$secs")"$$'\n'; \
	  if [ $$status != ok ]; then \
	    printf '\nmake test: FAILED in %s\n%s' "$$phase" "$$summary"; exit 1; \
	  fi; \
	done; \
	printf '\nmake test: all phases passed in %ss\n%s' "$$(( $$(date +%s) - total_start ))" "$$summary"

test-fmt:
	$(CARGO) fmt --all -- --check

test-clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# nextest (one process per test, clear summary) when installed, plain cargo test otherwise.
# nextest does not run doctests, so they run separately.
test-unit:
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
	  set -x; \
	  $(CARGO) nextest run --workspace; \
	  $(CARGO) test --workspace --doc; \
	else \
	  set -x; \
	  $(CARGO) test --workspace; \
	fi

test-loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(LOOM_TARGET_DIR) \
	  $(CARGO) test -p horus-shm --release --test loom_ring --test loom_pool

# Benchmark smoke: each binary in --quick mode, then its JSON must parse, have rows and no errors.
# No timing is asserted.
define CHECK_JSON
import json, sys
path = sys.argv[1]
with open(path) as f:
    doc = json.load(f)
rows = doc.get("rows", doc.get("results"))
if not isinstance(rows, list) or not rows:
    sys.exit(f"{path}: no rows")
errors = doc.get("errors") or []
if errors:
    sys.exit(f"{path}: errors reported: {errors}")
print(f"{path}: well-formed, {len(rows)} rows")
endef
export CHECK_JSON

test-bench-smoke:
	@mkdir -p $(SMOKE_DIR)
	$(CARGO) run --release -p horus-bench --bin pingpong -- --quick --json $(SMOKE_DIR)/pingpong.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/pingpong.json

test-sched-smoke:
	@mkdir -p $(SMOKE_DIR)
	$(CARGO) run --release -p horus-sched --bin determinism -- --quick --json $(SMOKE_DIR)/determinism.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/determinism.json
	$(CARGO) run --release -p horus-sched --bin scheduler_scaling -- --quick --json $(SMOKE_DIR)/scheduler_scaling.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/scheduler_scaling.json

test-demo-smoke:
	@if [ -d crates/horus-demo ]; then \
	  $(MAKE) demo; \
	else \
	  echo "skipped: crates/horus-demo does not exist yet"; \
	fi

# Python tests against the installed package; a no-op until python/ exists.
# Whoever adds python/ wires the build + pytest here (the check below makes sure they do).
# The Python package: wheel built by maturin and installed into .venv; pytest (incl.
# cross-language tests against a Rust peer process), mypy stubtest and mypy --strict.
include python/python.mk

test-python: setup py-test

# ---------------------------------------------------------------------------
# Benchmarks (not part of `make test`): pinned and unpinned passes, full payloads.

bench: setup
	@mkdir -p $(BENCH_DIR)
	$(CARGO) run --release -p horus-bench --bin pingpong -- --json $(BENCH_DIR)/pingpong.json

# ---------------------------------------------------------------------------
# Conveniences

fmt:
	$(CARGO) fmt --all

lint: test-fmt test-clippy

clean:
	rm -rf -- "$(CARGO_TARGET_DIR)" "$(LOOM_TARGET_DIR)"
