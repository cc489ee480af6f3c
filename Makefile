# The two commands of the README: `make run` and `make test`. Both install what they need.
VENV ?= .venv
VLLM_VENV ?= .venv-vllm
ARGS ?=

.PHONY: run test lint bench fixtures clean

run:
	@scripts/setup.sh
	$(VENV)/bin/voxdesk $(ARGS)

test:
	@scripts/setup.sh --test
	@scripts/setup-vllm.sh
	$(VENV)/bin/python -m tests.speech_fixtures
	$(VENV)/bin/python -m ruff check .
	$(VENV)/bin/python -m ruff format --check .
	$(VENV)/bin/python -m mypy
	REQUIRE_VMIC=1 $(VENV)/bin/python -m pytest -m "not vllm"
	REQUIRE_VLLM=1 $(VLLM_VENV)/bin/python -m pytest -m vllm

lint:
	@scripts/setup.sh --test
	$(VENV)/bin/python -m ruff check .
	$(VENV)/bin/python -m mypy

bench:
	@scripts/setup.sh --test
	@scripts/setup-vllm.sh
	$(VENV)/bin/python -m tests.speech_fixtures
	$(VENV)/bin/python -m benchmarks
	$(VENV)/bin/python -m benchmarks.realtime
	$(VENV)/bin/python -m benchmarks.desktop
	$(VLLM_VENV)/bin/python -m benchmarks.vllm_engine

fixtures:
	@scripts/setup.sh --test
	$(VENV)/bin/python -m tests.speech_fixtures

clean:
	rm -rf $(VENV) $(VLLM_VENV) build
