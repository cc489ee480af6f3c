# The two commands of the README: `make run` and `make test`. Both install what they need.
# `make check` is the inner loop: lint and the unit tests (no model, process, device or display).
VENV ?= .venv
VLLM_VENV ?= .venv-vllm
ARGS ?=

.PHONY: run test check lint bench soak fixtures installers clean

run:
	@scripts/setup.sh
	$(VENV)/bin/voxdesk $(ARGS)

test:
	@scripts/run-tests.sh

lint:
	@scripts/setup.sh --test
	$(VENV)/bin/python -m ruff check .
	$(VENV)/bin/python -m ruff format --check .
	scripts/link-namespace.sh
	$(VENV)/bin/python -m mypy

check: lint
	$(VENV)/bin/python -m pytest -q -m "not vllm and not integration" --ignore=tests/installers

bench:
	@scripts/setup.sh --test
	@scripts/setup-vllm.sh
	@scripts/setup-whisperlive.sh
	$(VENV)/bin/python -m tests.speech_fixtures
	scripts/random-whisper.sh
	$(VENV)/bin/python -m benchmarks
	$(VENV)/bin/python -m benchmarks.scoreboard
	$(VENV)/bin/python -m benchmarks.noise
	$(VENV)/bin/python -m benchmarks.vocabulary
	$(VENV)/bin/python -m benchmarks.files
	$(VENV)/bin/python -m benchmarks.whisper_models
	$(VENV)/bin/python -m benchmarks.realtime
	$(VENV)/bin/python -m benchmarks.desktop
	$(VLLM_VENV)/bin/python -m benchmarks.vllm_engine
	$(VLLM_VENV)/bin/python -m benchmarks.llm

# Hours on a real box: the controller fed an hour of speech, voxdesk serve 30 min per engine (SOAK_ARGS to change),
# then the full fuzz and disconnect counts (make test runs small counts of both).
SOAK_ARGS ?=
soak:
	@scripts/setup.sh --test
	@scripts/setup-vllm.sh
	$(VENV)/bin/python -m tests.speech_fixtures
	$(VENV)/bin/python -m tests.soak --which controller,serve $(SOAK_ARGS)
	$(VLLM_VENV)/bin/python -m tests.soak --which vllm $(SOAK_ARGS)
	VOXDESK_FUZZ_FRAMES=100000 VOXDESK_FUZZ_CONNECTIONS=500 VOXDESK_DISCONNECTS=1000 $(VENV)/bin/python -m pytest -q -s tests/fuzz

fixtures:
	@scripts/setup.sh --test
	$(VENV)/bin/python -m tests.speech_fixtures

# The Linux installers: build/installers/voxdesk_<version>_amd64.deb and the .tar.gz (cached).
installers:
	@scripts/setup.sh --test
	scripts/build-linux.sh

clean:
	rm -rf $(VENV) $(VLLM_VENV) build
