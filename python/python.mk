# Python package targets. Include from the top-level Makefile (paths are
# relative to the repository root):
#
#     include python/python.mk
#
#   make py-setup   .venv with maturin, pytest, numpy, mypy (idempotent)
#   make py-build   maturin release wheel, installed into .venv (tests run
#                   against the installed package, not the source tree)
#   make py-test    pytest (incl. cross-language tests against the Rust
#                   peer), mypy stubtest of horus._horus, mypy --strict
#   make py-bench   python/bench/python_latency.py --quick

CARGO_TARGET_DIR ?= $(HOME)/.cache/horus-target
export CARGO_TARGET_DIR

# The top-level Makefile's VENV if it has one.
PY_VENV    ?= $(or $(VENV),.venv)
PY         := $(PY_VENV)/bin/python
PY_WHEELS  := $(CARGO_TARGET_DIR)/wheels-horus
PY_PEER    := $(CARGO_TARGET_DIR)/release/horus-py-peer
# The `horus` binary and the user-message publisher the recording tests run (debug builds:
# the unit-test phase has built them already).
PY_HORUS_BIN       := $(CARGO_TARGET_DIR)/debug/horus
PY_USER_PUBLISHER  := $(CARGO_TARGET_DIR)/debug/examples/user_publisher
PY_SOURCES := $(shell find crates/horus-py crates/horus-actions crates/horus-params crates/horus-tensor crates/horus-idl crates/horus-cdr crates/horus-ros-msgs crates/horus-idl-gen crates/horus crates/horus-log crates/horus-shm crates/horus-msgs crates/horus-sched crates/horus-tf python/horus python/pyproject.toml -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' -o -name '*.toml' \) 2>/dev/null)

.PHONY: py-setup py-build py-peer py-record-tools py-test py-bench py-bench-deps

py-setup: $(PY_VENV)/.horus-dev

$(PY_VENV)/.horus-dev: python/requirements-dev.txt
	test -x $(PY) || python3 -m venv $(PY_VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r python/requirements-dev.txt
	touch $@

py-build: $(PY_VENV)/.horus-installed

$(PY_VENV)/.horus-installed: $(PY_VENV)/.horus-dev $(PY_SOURCES)
	rm -rf $(PY_WHEELS)
	cd python && ../$(PY_VENV)/bin/maturin build --release --quiet --interpreter ../$(PY) --out $(PY_WHEELS)
	$(PY) -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps $(PY_WHEELS)/horus-*.whl
	touch $@

py-peer:
	cargo build --release -p horus-py --bin horus-py-peer

# UNIT_BUILD (the top-level Makefile): the unit phase's own build, so nothing is compiled
# again (`-p horus-cli` alone resolves other features and rebuilt Zenoh and the CLI: a cold minute).
UNIT_BUILD ?= cargo build --workspace --bin horus --example user_publisher
py-record-tools:
	$(UNIT_BUILD)

py-test: py-build py-peer py-record-tools
	cd python/tests && HORUS_PY_PEER=$(PY_PEER) HORUS_BIN=$(PY_HORUS_BIN) \
	  HORUS_USER_PUBLISHER=$(PY_USER_PUBLISHER) ../../$(PY) -m pytest -q
	cd python/tests && ../../$(PY) -m mypy.stubtest horus._horus --allowlist ../stubtest-allowlist.txt
	cd python/tests && ../../$(PY) -m mypy --strict -p horus

# The peers python_latency compares with (PyPI packages; only the benchmark needs them).
py-bench-deps: $(PY_VENV)/.horus-bench-deps

$(PY_VENV)/.horus-bench-deps: $(PY_VENV)/.horus-dev
	$(PY) -m pip install --quiet --disable-pip-version-check iceoryx2 pyzmq
	touch $@

py-bench: py-build py-peer py-bench-deps
	HORUS_PY_PEER=$(PY_PEER) $(PY) python/bench/python_latency.py --quick
