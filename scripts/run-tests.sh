#!/usr/bin/env bash
# The steps of `make test`, in order. It stops at the first failing step, as make would, and
# always ends with one line saying which steps passed, which failed and which never ran, so
# an early failure does not hide whether the later steps (vLLM, installers) would pass.
set -uo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
VLLM_VENV=${VLLM_VENV:-.venv-vllm}
STEPS=(setup setup-vllm fixtures random-whisper ruff format mypy pytest pytest-vllm installers installer-tests)

run_step() {
    case "$1" in
        setup) scripts/setup.sh --test ;;
        setup-vllm) scripts/setup-vllm.sh ;;
        fixtures) "$VENV/bin/python" -m tests.speech_fixtures ;;
        random-whisper) scripts/random-whisper.sh ;;
        ruff) "$VENV/bin/python" -m ruff check . ;;
        format) "$VENV/bin/python" -m ruff format --check . ;;
        mypy) scripts/link-namespace.sh && "$VENV/bin/python" -m mypy ;;
        pytest) REQUIRE_VMIC=1 REQUIRE_RANDOM_WHISPER=1 "$VENV/bin/python" -m pytest -m "not vllm" --ignore=tests/installers ;;
        pytest-vllm) REQUIRE_VMIC=1 REQUIRE_VLLM=1 "$VLLM_VENV/bin/python" -m pytest -m vllm ;;
        installers) scripts/build-linux.sh ;;
        installer-tests) REQUIRE_VMIC=1 "$VENV/bin/python" -m pytest tests/installers ;;
    esac
}

summary=()
status=0
for step in "${STEPS[@]}"; do
    if ((status)); then
        summary+=("$step: not run")
        continue
    fi
    echo "=== make test: $step"
    started=$SECONDS
    if run_step "$step"; then
        summary+=("$step: passed ($((SECONDS - started)) s)")
    else
        status=1
        summary+=("$step: FAILED ($((SECONDS - started)) s)")
    fi
done
echo
echo "make test steps: $(IFS=';'; echo "${summary[*]}" | sed 's/;/, /g')"
exit "$status"
