# horus — the one entry point for people and CI.
#
#   make demo    run the demo robot (installs what it needs first)
#   make test    every check the project has; CI runs exactly this (.ci/run)
#   make bench   full benchmark suite: JSON into bench-results/, regenerates docs/benchmarks.md
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
# No incremental-compilation caches: they do not speed up a build from a fresh clone (CI's)
# and were the largest part of a target dir that grew until the disk was full.
CARGO_INCREMENTAL ?= 0
export CARGO_INCREMENTAL
# loom builds with `--cfg loom`; a separate target dir keeps it from invalidating the normal one.
LOOM_TARGET_DIR  ?= $(CARGO_TARGET_DIR)-loom
# Scratch space for smoke-test outputs (JSON written by the benchmark binaries).
SMOKE_DIR        ?= $(CARGO_TARGET_DIR)/smoke
BENCH_DIR        ?= bench-results
VENV             ?= .venv

# Debian packages the build needs, as `command:package` pairs; installed only when the command
# is missing: a C compiler and libc headers (the `cc` crate builds C), python3 (JSON checks),
# and a font for the benchmark plots.
# fonts-dejavu-core: the TrueType font the benchmark report draws its plot labels with (no
# command of that name exists, so the dpkg check decides). tmux: the `horus monitor` test drives
# the terminal UI in it (send-keys, capture-pane). iproute2 (`ip`, `tc`) and nftables (`nft`):
# the multi-host tests and benchmark make two network namespaces joined by a veth pair and
# impair the link (packet loss with nftables, a bandwidth cap with tc tbf).
APT_NEEDS := cc:build-essential python3:python3 fonts-dejavu-core:fonts-dejavu-core tmux:tmux ip:iproute2 nft:nftables

# sudo only when not root and sudo exists (root needs none).
SUDO := $(shell [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && echo sudo)

# The phases of `make test`, in order; the first failure stops the run.
TEST_PHASES := test-fmt test-clippy test-unit test-loom test-bench-smoke test-sched-smoke \
               test-demo-smoke test-chaos-smoke test-python test-ros2 test-fuzz

.PHONY: help setup setup-python setup-ros2 demo cli chaos test bench bench-ros2 fmt lint clean setup-fuzz fuzz-build fuzz $(TEST_PHASES)

help:
	@echo "make demo    run the demo robot"
	@echo "make cli     install the horus command line (~/.cargo/bin, and the Python venv if present)"
	@echo "make test    fmt, clippy, tests, loom models, benchmark/demo smoke, Python tests, ROS 2 oracle, fuzz smoke"
	@echo "make bench   full benchmark suite -> $(BENCH_DIR)/*.json, docs/benchmarks.md, docs/img/"
	@echo "make fuzz    every fuzz target FUZZ_SECONDS (default 60) each, see docs/fuzzing.md"
	@echo "make fmt | lint | clean | setup | setup-python | setup-ros2"
	@echo "(build dir: $(CARGO_TARGET_DIR))"

# ---------------------------------------------------------------------------
# The `horus` command line (docs/cli.md): installed into ~/.cargo/bin (on the PATH of a
# rustup install) and linked into the Python venv's bin/ when the venv exists, so it is
# there after `. .venv/bin/activate` too.
cli: setup
	$(CARGO) install --locked --path crates/horus-cli --bin horus --force --quiet
	@if [ -d $(VENV)/bin ]; then ln -sf "$$($(CARGO) install --list >/dev/null; command -v horus || echo $(HOME)/.cargo/bin/horus)" $(VENV)/bin/horus; fi
	@echo "horus installed: $$(command -v horus || echo $(HOME)/.cargo/bin/horus)"

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
	@# Once per top-level make: a phase of `make test` re-entering setup must never remove the
	@# build dirs the run is using (and its /dev/shm snapshot) half-way through.
	@if [ -z "$${HORUS_MAKE_TEST_RUNNING:-}" ]; then scripts/disk-guard.sh $(CARGO_TARGET_DIR); fi

# Python environment for the bindings: .venv with maturin, pytest, numpy, mypy
# (python/python.mk, idempotent).
setup-python: setup py-setup

# ---------------------------------------------------------------------------
# Demo

# The demo robot through its launch file (launch/demo.yaml, docs/launch.md): `horus launch`
# starts the monitor and the robot's processes (Rust and Python), prefixes their output,
# and stops them in reverse order when the monitor's DEMO_SECONDS are up; it exits 0 only
# if every process exited cleanly, and the monitor checks /dev/shm. One namespace per run.
DEMO_SECONDS ?= 5

# The run is recorded (DEMO_RECORDING), then the controller is re-executed from the
# recording twice on the simulated clock: both runs and the live commands must be identical.
DEMO_RECORDING ?= $(CARGO_TARGET_DIR)/demo.mcap

# The demo's `horus` leaves out the network bridge (feature `bridge`: Zenoh is most of a cold
# release build, and the demo runs on one host); `make cli` installs the full one.
# DEMO_PROFILE=debug (what the test phase uses) runs the unit phase's debug build of
# `horus` and the robot instead: no build at all after that phase, where the release build
# recompiled horus-shm … horus-cli with the CLI's feature set (2 m 48 s of a cold make test).
DEMO_PROFILE ?= release
DEMO_BIN      = $(CARGO_TARGET_DIR)/$(DEMO_PROFILE)
ifeq ($(DEMO_PROFILE),debug)
DEMO_BUILD    = $(UNIT_BUILD)
else
DEMO_BUILD    = $(CARGO) build --release -p horus-demo -p horus-cli --no-default-features
endif

demo: setup py-build
	$(DEMO_BUILD)
	HORUS_PYTHON=$(abspath $(PY)) $(DEMO_BIN)/horus launch launch/demo.yaml \
	  demo:=$(DEMO_BIN)/horus-demo horus:=$(DEMO_BIN)/horus \
	  recording:=$(DEMO_RECORDING) seconds:=$(DEMO_SECONDS) namespace:=demo-$$$$
	$(DEMO_BIN)/horus bag info $(DEMO_RECORDING)
	$(DEMO_BIN)/horus-demo --replay $(DEMO_RECORDING)

# The demo robot with ROS 2 nodes beside it (launch/demo_ros2.yaml, scripts/demo-ros2.sh;
# docs/ros2-bridge.md, "make demo-ros2"): `horus ros2`, an rclpy teleop (geometry_msgs/Twist
# on /demo/cmd_vel_teleop) and an rclpy listener of the horus scans, in the ROS 2 venv of
# setup-ros2; a network namespace with only lo when root, else DDS on 127.0.0.1 only.
# The demo's build plus the `ros2` feature (DEMO_PROFILE=debug: the unit phase's build).
.PHONY: demo-ros2
demo-ros2: setup-ros2 py-build
	$(DEMO_BUILD) $(if $(filter debug,$(DEMO_PROFILE)),,--features horus-cli/ros2)
	scripts/demo-ros2.sh $(DEMO_BIN) $(abspath $(PY)) $(DEMO_SECONDS)

# ---------------------------------------------------------------------------
# Tests. Each phase is its own target (`make test-loom` runs just that one);
# `make test` runs them in order, prints a header and the time of each, and a summary.

# Every phase must leave /dev/shm as it found it: checked after the last phase. Files
# that the peer middlewares' libraries leave behind (Zenoh's `*.zenoh`, iceoryx2's
# `iox2_*`; a benchmark child exiting after the bench phase's own clean-up can leave
# one) are removed first; anything else fails the run. ROS 2's Python (rclpy: recording
# tests of the unit phase, the ROS 2 phase) runs through scripts/ros2-python, which
# removes what its libraries leave there: the `lttng-ust-wait-*` files LTTng-UST (ROS 2
# tracing) makes for a tracing daemon and never removes, if they were not there before it
# ran, and a killed node's Fast DDS files (`fastdds shm clean`: only those no live process
# holds).
SHM_BEFORE := $(CARGO_TARGET_DIR)/shm-before-test

test: setup
	@mkdir -p $(CARGO_TARGET_DIR); scripts/shm-guard.sh snapshot $(SHM_BEFORE)
	@export HORUS_MAKE_TEST_RUNNING=1; summary=""; total_start=$$(date +%s); \
	for phase in $(TEST_PHASES); do \
	  printf '\n==> [%s] make %s\n' "$$(date +%T)" "$$phase"; \
	  start=$$(date +%s); \
	  if $(MAKE) $$phase; then status=ok; else status=FAILED; fi; \
	  secs=$$(( $$(date +%s) - start )); \
	  printf '<== make %s: %s in %ss\n' "$$phase" "$$status" "$$secs"; \
	  summary="$$summary$$(printf '  %-18s %-6s %5ss' "$$phase" "$$status" "$$secs")"$$'\n'; \
	  if [ $$status != ok ]; then \
	    scripts/shm-guard.sh clean-peers $(SHM_BEFORE); \
	    printf '\nmake test: FAILED in %s\n%s' "$$phase" "$$summary"; exit 1; \
	  fi; \
	done; \
	scripts/shm-guard.sh clean-peers $(SHM_BEFORE); \
	if ! scripts/shm-guard.sh check $(SHM_BEFORE); then \
	  printf '\nmake test: FAILED: files left in /dev/shm (above)\n%s' "$$summary"; exit 1; \
	fi; \
	printf '\nmake test: all phases passed in %ss\n%s' "$$(( $$(date +%s) - total_start ))" "$$summary"

test-fmt:
	$(CARGO) fmt --all -- --check

test-clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# nextest (one process per test, clear summary) when installed, plain cargo test otherwise.
# nextest does not run doctests, so they run separately. Some tests read what horus writes
# with ROS 2's own Python readers (rclpy, rosbags, mcap-ros2-support) through
# scripts/ros2-python: the ROS 2 venv (setup-ros2) is made first.
# The unit phase's build without running anything: `nextest list` compiles exactly what
# `nextest run` does (test binaries, and the bins and examples of every package with
# integration tests, with dev-dependencies' features), so after that phase it compiles
# nothing. Later phases run those debug binaries (benchmark smoke, demo smoke, the Python
# recording tests); `cargo build` resolves features without dev-dependencies and recompiled
# Zenoh and the CLI (73 s cold).
ifeq ($(shell $(CARGO) nextest --version >/dev/null 2>&1 && echo yes),yes)
UNIT_BUILD = $(CARGO) nextest list --workspace --message-format oneline >/dev/null
else
UNIT_BUILD = $(CARGO) test --workspace --no-run
endif
export UNIT_BUILD

test-unit: setup-ros2
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
	  $(CARGO) test -p horus-shm --release --test loom_ring --test loom_pool \
	  --test loom_protocol --test loom_service
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(LOOM_TARGET_DIR) \
	  $(CARGO) test -p horus-log --release --test loom_log
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(LOOM_TARGET_DIR) \
	  $(CARGO) test -p horus-tf --release --test loom_tf
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(LOOM_TARGET_DIR) \
	  $(CARGO) test -p horus-tensor --release --test loom_refcounts

# Benchmark smoke: each binary in --quick mode, then its JSON must parse, have rows and no errors
# (the suite binaries: every row their run promises, see scripts/check_suite_json.py), and the
# report must render a page and its figures from those JSONs.
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

# The benchmark binaries are built once (one cargo invocation, all of them) and then run.
BENCH_BIN   := $(CARGO_TARGET_DIR)/release
# The smoke phase runs the debug build that the unit phase has already made (UNIT_BUILD:
# the same feature resolution, so nothing is compiled again): only whether each benchmark
# runs and writes a complete JSON is checked, never a figure. (An optimised build of the
# peers — iceoryx2, Zenoh, tonic, plotters — was 5 of make test's 26 cold minutes; the debug
# runs cost about 2 minutes more than optimised ones.) `make bench` builds `release`.
SMOKE_BIN   := $(CARGO_TARGET_DIR)/debug
# pingpong's quick counts are for optimised code: fewer round trips in the debug smoke.
SMOKE_PINGPONG_ITERS := --iters 300 --warmup 30
SUITE_BINS  := robotics_messages payload_sweep all_paths scalability peers interleaved many_to_many rpc ros_messages
CHECK_SUITE := $(PYTHON) crates/horus-bench/scripts/check_suite_json.py

test-bench-smoke: setup-ros2
	@mkdir -p $(SMOKE_DIR)
	@scripts/shm-guard.sh snapshot $(SMOKE_DIR)/shm-before
	$(UNIT_BUILD)
	$(SMOKE_BIN)/pingpong --quick $(SMOKE_PINGPONG_ITERS) --json $(SMOKE_DIR)/pingpong.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/pingpong.json
	$(SMOKE_BIN)/logging --quick --json $(SMOKE_DIR)/logging.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/logging.json
	@# block_wake.json has no rows: the report below parses and renders it.
	$(SMOKE_BIN)/block_wake --quick --json $(SMOKE_DIR)/block_wake.json
	$(SMOKE_BIN)/tf --quick --json $(SMOKE_DIR)/tf.json
	@$(PYTHON) -c 'import json,sys; d=json.load(open(sys.argv[1])); \
	  assert d.get("lookups") and d.get("cpu"), sys.argv[1] + ": no lookups or cpu rows"; \
	  print(sys.argv[1] + ": well-formed,", len(d["lookups"]), "lookup rows,", len(d["cpu"]), "cpu rows")' $(SMOKE_DIR)/tf.json
	@for b in $(SUITE_BINS); do \
	  echo "+ $(SMOKE_BIN)/$$b --quick --json $(SMOKE_DIR)/$$b.json"; \
	  $(SMOKE_BIN)/$$b --quick --json $(SMOKE_DIR)/$$b.json || exit 1; \
	  $(CHECK_SUITE) $$b $(SMOKE_DIR)/$$b.json || exit 1; \
	done
	@# Two hosts in network namespaces (root): skipped, saying so, where they cannot be made.
	@if [ "$$(id -u)" = 0 ] && ip netns add hx-probe-$$$$ 2>/dev/null; then \
	  ip netns del hx-probe-$$$$; \
	  echo "+ $(SMOKE_BIN)/multi_host --quick --pinned-only --json $(SMOKE_DIR)/multi_host.json"; \
	  $(SMOKE_BIN)/multi_host --quick --pinned-only --json $(SMOKE_DIR)/multi_host.json; \
	  $(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/multi_host.json; \
	else echo "multi_host: skipped (network namespaces need root and iproute2)"; fi
	@# ROS 2 through the bridge against rclpy (the ROS 2 venv), in a namespace with only lo.
	@if [ "$$(id -u)" = 0 ] && [ -x $(ROS2_VENV)/bin/python ]; then \
	  echo "+ $(SMOKE_BIN)/ros2 --quick --json $(SMOKE_DIR)/ros2.json"; \
	  $(SMOKE_BIN)/ros2 --quick --json $(SMOKE_DIR)/ros2.json; \
	  $(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/ros2.json; \
	else echo "ros2: skipped (needs root for its network namespace and the ROS 2 venv: make setup-ros2)"; fi
	@scripts/shm-guard.sh clean-peers $(SMOKE_DIR)/shm-before
	@# The report renders from whatever JSON is there (the scheduler's come in a later phase).
	@rm -rf $(SMOKE_DIR)/img $(SMOKE_DIR)/benchmarks.md
	$(SMOKE_BIN)/report --results $(SMOKE_DIR) --out $(SMOKE_DIR)/benchmarks.md --img $(SMOKE_DIR)/img --allow-missing
	@for f in benchmarks.md img/latency_vs_payload.png img/payload_sweep.png img/fanout.png img/topics.png; do \
	  test -s $(SMOKE_DIR)/$$f || { echo "report did not write $$f" >&2; exit 1; }; \
	done; \
	! grep -n '{{' $(SMOKE_DIR)/benchmarks.md || { echo "unfilled template key" >&2; exit 1; }; \
	echo "report: page and figures written"

test-sched-smoke:
	@mkdir -p $(SMOKE_DIR)
	$(CARGO) run --release -p horus-sched --bin determinism -- --quick --json $(SMOKE_DIR)/determinism.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/determinism.json
	$(CARGO) run --release -p horus-sched --bin scheduler_scaling -- --quick --json $(SMOKE_DIR)/scheduler_scaling.json
	@$(PYTHON) -c "$$CHECK_JSON" $(SMOKE_DIR)/scheduler_scaling.json

# After the demo, its recording is read by ROS 2's tools (mcap-ros2-support, rosbags, rclpy
# in the ROS 2 venv) field by field against what horus decodes (crates/horus-demo/tests/ros2_recording.rs).
test-demo-smoke: setup-ros2
	@if [ -d crates/horus-demo ]; then \
	  $(MAKE) demo DEMO_PROFILE=debug; \
	  echo "+ DEMO_RECORDING=$(DEMO_RECORDING) $(CARGO) test --workspace --test ros2_recording"; \
	  DEMO_RECORDING=$(DEMO_RECORDING) $(CARGO) test --workspace --test ros2_recording; \
	else \
	  echo "skipped: crates/horus-demo does not exist yet"; \
	fi

# Chaos soak (docs/chaos.md): publishers and subscribers in Rust and Python on a Block and a
# DropOldest topic, SIGKILLed at random and replaced; every message reconciled, /dev/shm checked.
# `make chaos` runs it for CHAOS_SECONDS; the smoke phase is a short run with few processes.
# Both need the Python module (py-build) for the Python children. No timing is asserted.
CHAOS_SECONDS ?= 600
CHAOS_JSON    ?= $(BENCH_DIR)/chaos.json

chaos: setup py-build
	@mkdir -p $(dir $(CHAOS_JSON))
	$(CARGO) run --release -p horus-chaos --bin chaos -- --seconds $(CHAOS_SECONDS) \
	  --python-exe $(PY) --json $(CHAOS_JSON)

test-chaos-smoke: py-build
	@mkdir -p $(SMOKE_DIR)
	$(CARGO) run --release -p horus-chaos --bin chaos -- --seconds 15 --publishers 2 \
	  --subscribers 2 --python 2 --python-exe $(PY) --json $(SMOKE_DIR)/chaos.json

# Python tests against the installed package; a no-op until python/ exists.
# Whoever adds python/ wires the build + pytest here (the check below makes sure they do).
# The Python package: wheel built by maturin and installed into .venv; pytest (incl.
# cross-language tests against a Rust peer process), mypy stubtest and mypy --strict.
include python/python.mk

# The Python ROS 2 messages ping-pong (python/bench/ros_messages_py.py), a few round trips
# of each message: the script still runs and leaves nothing behind. The ROS 2 venv first:
# the Python tests include one against an rclpy server through the bridge, required as root.
test-python: setup setup-ros2 py-test
	@mkdir -p $(SMOKE_DIR)
	$(PY) python/bench/ros_messages_py.py --quick --json $(SMOKE_DIR)/ros_messages_py.json

# ---------------------------------------------------------------------------
# ROS 2 (docs/interfaces.md, "How it is checked"): horus's CDR against rclpy's, live.
#
# ROS 2 kilted from PyPI wheels in a venv of its own, outside the clone (fresh clones reuse
# it, like the build dir; about 330 MB): rclpy, the common interfaces and rmw_fastrtps_cpp
# for the oracle; rosbags, mcap and mcap-ros2-support for tests that read ROS 2 recordings
# beside rclpy; psutil for Fast DDS's `fastdds shm clean`; cyclonedds (Eclipse Cyclone DDS's
# Python binding, its C library bundled) for the bridge's tests against a second DDS
# implementation (crates/horus-ros2/tests/cyclone_dds.rs). No ROS install and no sourced
# setup.bash: scripts/ros2-python runs the venv's Python with the environment ROS 2 gets
# here (discovery on this host only; what rclpy's libraries leave in /dev/shm removed,
# see the script). setup-ros2 is silent when the venv imports all of them and was made
# from this package list (ROS2_STAMP).
ROS2_VENV     ?= $(HOME)/.cache/horus-ros2-venv
ROS2_PACKAGES := ros-kilted-rclpy ros-kilted-common-interfaces ros-kilted-test-msgs ros-kilted-rmw-fastrtps-cpp \
                 rosbags mcap mcap-ros2-support psutil cyclonedds==11.0.1
ROS2_IMPORTS  := rclpy.serialization,std_msgs.msg,std_srvs.srv,sensor_msgs.msg,nav_msgs.msg,visualization_msgs.msg,rosbags.rosbag2,mcap_ros2.decoder,psutil,cyclonedds.domain
ROS2_STAMP    := $(ROS2_VENV)/.horus-packages
ROS2_PY       := scripts/ros2-python
# scripts/ros2-python (also when a test runs it) uses this venv.
export HORUS_ROS2_VENV = $(ROS2_VENV)
# As root (CI) the ROS 2 tests must run: with HORUS_ROS2_REQUIRED=1 a test that would skip
# (no venv, no network namespace) fails instead (crates/horus-ros2/tests/common).
export HORUS_ROS2_REQUIRED := $(if $(filter 0,$(shell id -u)),1,0)

setup-ros2: setup
	@if [ "$$(cat $(ROS2_STAMP) 2>/dev/null)" != "$(ROS2_PACKAGES)" ] || \
	   ! $(ROS2_PY) -c "import $(ROS2_IMPORTS)" >/dev/null 2>&1; then \
	  echo "setup-ros2: installing ROS 2 kilted wheels into $(ROS2_VENV)"; \
	  rm -f $(ROS2_STAMP); \
	  test -x $(ROS2_VENV)/bin/python || $(PYTHON) -m venv $(ROS2_VENV); \
	  $(ROS2_VENV)/bin/pip install --quiet --disable-pip-version-check $(ROS2_PACKAGES); \
	  $(ROS2_PY) -c "import $(ROS2_IMPORTS)"; \
	  echo "$(ROS2_PACKAGES)" > $(ROS2_STAMP); \
	fi

# The live oracle: crates/horus-ros2-oracle/live_oracle.py (rclpy, in the ROS 2 venv) makes
# ROS2_ORACLE_PER_TYPE randomised messages of every standard type rclpy has from seed
# ROS2_ORACLE_SEED, serializes them, and runs the Rust checker horus-ros2-oracle, which
# compares horus's encoding with rclpy's bytes (all but padding, equal length) and decodes
# rclpy's bytes; rclpy then deserializes horus's bytes. tf2_msgs, which no wheel ships, goes
# through rosbags' ROS 2 type system instead (no_wheel_rosbags.py: its hashes checked
# against ROS 2's, its serializer the oracle, horus's bytes read back by it). Both are real processes exchanging
# JSON lines through a temporary directory. /dev/shm must be as before (scripts/ros2-python
# removes the lttng-ust-wait-* files rclpy's tracing library makes).
ROS2_ORACLE_SEED     ?= 20261127
ROS2_ORACLE_PER_TYPE ?= 30
ROS2_SHM_BEFORE      := $(CARGO_TARGET_DIR)/shm-before-ros2

test-ros2: setup-ros2
	$(CARGO) build -p horus-ros2-oracle
	@scripts/shm-guard.sh snapshot $(ROS2_SHM_BEFORE)
	$(ROS2_PY) crates/horus-ros2-oracle/live_oracle.py \
	  --checker $(CARGO_TARGET_DIR)/debug/horus-ros2-oracle \
	  --seed $(ROS2_ORACLE_SEED) --per-type $(ROS2_ORACLE_PER_TYPE)
	@scripts/shm-guard.sh check $(ROS2_SHM_BEFORE)

# ---------------------------------------------------------------------------
# Fuzzing (docs/fuzzing.md): cargo-fuzz targets for every parser of untrusted input — what
# horus reads from other processes (segment files, ring slots, chunk and tensor descriptors,
# the statistics table, log segments), from the network (Foxglove client frames, the bridge's
# wire header and keys) and from files (descriptions, ROS 2 interfaces, MCAP/CDR recordings,
# launch and parameter YAML).
# Stable toolchain, so libFuzzer runs without a sanitizer (-s none); debug assertions and
# overflow checks are on (-a). `make fuzz` runs every target FUZZ_SECONDS; the test phase
# runs each FUZZ_SMOKE_SECONDS after building them once. A crash, panic or hang (an input
# taking more than FUZZ_TIMEOUT s) fails the run; its input is kept under
# $(FUZZ_DIR)/artifacts/<target>/ (not in git). Corpora grow in FUZZ_CORPUS, outside the
# clone; the committed seeds in $(FUZZ_DIR)/seeds/ are only read.
FUZZ_DIR           := fuzz
# Every target is a [[bin]] of the fuzz crate: the list is read from its Cargo.toml (the
# name line after each [[bin]]), so a target added there is built and run by both `make fuzz`
# and the test phase; `make fuzz FUZZ_TARGETS="ring_read …"` runs a subset.
FUZZ_TARGETS       := $(shell sed -n '/^\[\[bin\]\]/,/^name *=/s/^name *= *"\([^"]*\)".*/\1/p' \
                        $(FUZZ_DIR)/Cargo.toml)
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 2
FUZZ_TIMEOUT       ?= 10
# --cfg fuzzing and coverage instrumentation: a target dir of its own, like loom's.
FUZZ_TARGET_DIR    ?= $(CARGO_TARGET_DIR)-fuzz
FUZZ_CORPUS        ?= $(CARGO_TARGET_DIR)/fuzz-corpus
FUZZ_LOGS          ?= $(CARGO_TARGET_DIR)/fuzz-logs
FUZZ_FLAGS         := --fuzz-dir $(FUZZ_DIR) --target-dir $(FUZZ_TARGET_DIR) -s none -a

# cargo-fuzz itself, installed once (crates.io; works on stable with -s none).
setup-fuzz:
	@$(CARGO) fuzz --version >/dev/null 2>&1 || { \
	  echo "setup-fuzz: installing cargo-fuzz"; $(CARGO) install cargo-fuzz --locked; }

fuzz-build: setup-fuzz
	$(CARGO) fuzz build $(FUZZ_FLAGS)

# $(call FUZZ_RUN,seconds): every target for that long, each logged to $(FUZZ_LOGS)/<target>.log;
# then one line per target with libFuzzer's final figures (executions, exec/s, coverage `cov`
# when the seeds and corpus are loaded -> at the end, features `ft`; the end is the DONE line,
# or the last one before a crash: a drop of the first `cov` shows seeds that no longer reach the
# code, e.g. of an older format). A failed target shows the end of its log and the others
# still run; then the run fails.
define FUZZ_RUN
if [ -z "$(strip $(FUZZ_TARGETS))" ]; then \
  echo "fuzz: no [[bin]] target found in $(FUZZ_DIR)/Cargo.toml" >&2; exit 1; fi; \
mkdir -p $(FUZZ_LOGS); failed=""; report=""; \
for t in $(FUZZ_TARGETS); do \
  mkdir -p $(FUZZ_CORPUS)/$$t; \
  echo "+ cargo fuzz run $$t -- -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT)"; \
  verdict=""; \
  if ! $(CARGO) fuzz run $(FUZZ_FLAGS) $$t $(FUZZ_CORPUS)/$$t $(FUZZ_DIR)/seeds/$$t -- \
       -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT) -print_final_stats=1 \
       >$(FUZZ_LOGS)/$$t.log 2>&1; then \
    failed="$$failed $$t"; verdict="   FAILED"; tail -n 40 $(FUZZ_LOGS)/$$t.log; \
  fi; \
  inited=$$(grep -E '^#[0-9]+[[:space:]]+INITED' $(FUZZ_LOGS)/$$t.log | tail -n 1 || true); \
  last=$$(grep -E '^#[0-9]+[[:space:]].* cov: ' $(FUZZ_LOGS)/$$t.log | tail -n 1 || true); \
  stat() { sed -n "s/^stat::$$1: *//p" $(FUZZ_LOGS)/$$t.log | tail -n 1; }; \
  field() { sed -n "s|.* $$1: *\([0-9]*\).*|\1|p" <<<"$$2"; }; \
  report="$$report$$(printf '  %-22s %12s execs %9s exec/s   cov %5s -> %5s   ft %5s%s' \
    $$t "$$(stat number_of_executed_units)" "$$(stat average_exec_per_sec)" \
    "$$(field cov "$$inited")" "$$(field cov "$$last")" "$$(field ft "$$last")" \
    "$$verdict")"$$'\n'; \
done; \
printf '\nfuzz (%ss per target, logs in %s):\n%s' "$(1)" "$(FUZZ_LOGS)" "$$report"; \
if [ -n "$$failed" ]; then \
  echo "fuzz: FAILED:$$failed (inputs under $(FUZZ_DIR)/artifacts/)" >&2; exit 1; \
fi
endef

fuzz: setup fuzz-build
	@$(call FUZZ_RUN,$(FUZZ_SECONDS))

test-fuzz: fuzz-build
	@$(call FUZZ_RUN,$(FUZZ_SMOKE_SECONDS))

# ---------------------------------------------------------------------------
# Benchmarks (not part of `make test`): the whole suite in full mode, then docs/benchmarks.md
# and docs/img/*.png regenerated from its JSON. A benchmark whose measurement fails still
# writes its JSON (the failure is listed on the page); `make bench` then exits non-zero.

# The page and figures `make bench` regenerates.
BENCH_DOC  ?= docs/benchmarks.md
BENCH_IMG  ?= docs/img
# `result:binary:arguments` — writes $(BENCH_DIR)/<result>.json; `=` stands for a space in
# the arguments. pingpong_touch: the 1 MiB-vs-16 B loan target of issue 2 (touch payload).
BENCH_RUNS := pingpong:pingpong: \
              pingpong_touch:pingpong:--touch=--pinned-only=--only=ref,horus=--sizes=16,1048576 \
              robotics_messages:robotics_messages: ros_messages:ros_messages: payload_sweep:payload_sweep: \
              all_paths:all_paths: scalability:scalability: peers:peers: block_wake:block_wake: \
              interleaved:interleaved:--rounds=5 many_to_many:many_to_many:--rounds=5 rpc:rpc:--rounds=3 logging:logging: \
              determinism:determinism:--spin-us=100 scheduler_scaling:scheduler_scaling: \
              tf:tf:--rounds=3 \
              multi_host:multi_host:--rounds=3=--markdown=docs/multi-host-results.md \
              ros2:ros2:--rounds=3

# The benchmark packages: horus-bench (horus alone) and one package per family of peers
# measured, so that each binary compiles only the peers it measures; the report last.
BENCH_PKGS := horus-bench horus-bench-pingpong horus-bench-peers horus-bench-rpc \
              horus-bench-multi-host horus-bench-ros horus-bench-ros2 horus-bench-loggers \
              horus-bench-report

# The Python benchmarks run last, against the installed package: issue 5's (with the Rust
# peer) and issue 19's ROS 2 one (bench-ros2: horus against rclpy from the ROS 2 venv).
bench: setup py-build py-peer py-bench-deps setup-ros2
	@mkdir -p $(BENCH_DIR)
	@scripts/shm-guard.sh snapshot $(BENCH_DIR)/shm-before
	$(CARGO) build --release $(addprefix -p ,$(BENCH_PKGS)) --bins
	$(CARGO) build --release -p horus-sched --bin determinism --bin scheduler_scaling
	@start=$$(date +%s); failed=""; \
	for run in $(BENCH_RUNS); do \
	  name=$${run%%:*}; rest=$${run#*:}; bin=$${rest%%:*}; args=$${rest#*:}; args=$${args//=/ }; \
	  printf '\n==> [%s] %s %s\n' "$$(date +%T)" "$$bin" "$$args"; \
	  t0=$$(date +%s); \
	  $(BENCH_BIN)/$$bin $$args --json $(BENCH_DIR)/$$name.json || failed="$$failed $$name"; \
	  echo "<== $$name: $$(( $$(date +%s) - t0 ))s"; \
	done; \
	printf '\n==> [%s] python_latency\n' "$$(date +%T)"; \
	HORUS_PY_PEER=$(PY_PEER) $(PY) python/bench/python_latency.py --json $(BENCH_DIR)/python_latency.json \
	  || failed="$$failed python_latency"; \
	printf '\n==> [%s] ros_python\n' "$$(date +%T)"; \
	$(PY) python/bench/ros_python.py --json $(BENCH_DIR)/ros_python.json || failed="$$failed ros_python"; \
	printf '\n==> [%s] ros_messages_py\n' "$$(date +%T)"; \
	$(PY) python/bench/ros_messages_py.py --json $(BENCH_DIR)/ros_messages_py.json || failed="$$failed ros_messages_py"; \
	scripts/shm-guard.sh clean-peers $(BENCH_DIR)/shm-before; \
	$(BENCH_BIN)/report --results $(BENCH_DIR) --out $(BENCH_DOC) --img $(BENCH_IMG); \
	echo "make bench: $$(( $$(date +%s) - start ))s"; \
	if [ -n "$$failed" ]; then echo "make bench: measurements failed in:$$failed" >&2; exit 1; fi

# Issue 19's Python benchmark alone (also part of `make bench`): a PointCloud2's data as a
# NumPy view, and horus Python against rclpy + Fast DDS (the ROS 2 venv, scripts/ros2-python,
# which removes the /dev/shm files rclpy's process leaves). Writes $(BENCH_DIR)/ros_python.json;
# then the Python ROS 2 messages ping-pong (ros_messages_py.json).
bench-ros2: setup py-build setup-ros2
	@mkdir -p $(BENCH_DIR)
	$(PY) python/bench/ros_python.py --json $(BENCH_DIR)/ros_python.json
	$(PY) python/bench/ros_messages_py.py --json $(BENCH_DIR)/ros_messages_py.json

# ---------------------------------------------------------------------------
# Conveniences

fmt:
	$(CARGO) fmt --all

lint: test-fmt test-clippy

clean:
	rm -rf -- "$(CARGO_TARGET_DIR)" "$(LOOM_TARGET_DIR)"
