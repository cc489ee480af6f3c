#!/usr/bin/env bash
# The steps of `make test`. Steps that do not need each other run side by side: each phase is
# a list of lanes, a lane runs its steps in order, and a phase starts when the one before it
# passed. A lane stops at its first failing step, as make would. The run always ends with one
# line saying which steps passed, which failed and which never ran, so an early failure does
# not hide whether the other steps would pass. A phase with one lane prints as it goes; a phase
# with several prints each lane's output (also kept in build/test-logs/lane-N.log) once it is done.
set -uo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
VLLM_VENV=${VLLM_VENV:-.venv-vllm}
LOGS=build/test-logs
# Phases, lanes separated by "|". The vLLM venv's pip install waits on the network while the
# fixtures, the linters and the installers' PyInstaller run; random-whisper needs the vLLM venv.
# The two test tiers run side by side: vLLM's CPU worker keeps to one core, the other tier
# mostly waits on real-time audio, and each rig (microphone, display, servers) is its own.
PHASES=(
    "setup"
    "setup-vllm random-whisper | fixtures ruff format mypy | installers"
    "pytest | pytest-vllm installer-tests"
)

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

# Runs one lane's steps; each step's status goes to $LOGS/STEP.status ("passed N s" or "FAILED N s").
run_lane() {
    local step started
    for step in "$@"; do
        echo "=== make test: $step"
        started=$SECONDS
        if run_step "$step"; then
            echo "passed ($((SECONDS - started)) s)" >"$LOGS/$step.status"
        else
            echo "FAILED ($((SECONDS - started)) s)" >"$LOGS/$step.status"
            return 1
        fi
    done
}

rm -rf "$LOGS"
mkdir -p "$LOGS"
status=0
for phase in "${PHASES[@]}"; do
    ((status)) && break
    IFS='|' read -r -a lanes <<<"$phase"
    if ((${#lanes[@]} == 1)); then
        # shellcheck disable=SC2086 # a lane is a list of step names
        run_lane ${lanes[0]} 2>&1 | tee "$LOGS/lane-0.log"
        ((PIPESTATUS[0])) && status=1
        continue
    fi
    pids=()
    for i in "${!lanes[@]}"; do
        # shellcheck disable=SC2086
        run_lane ${lanes[$i]} >"$LOGS/lane-$i.log" 2>&1 &
        pids+=($!)
    done
    for i in "${!lanes[@]}"; do
        wait "${pids[$i]}" || status=1
        cat "$LOGS/lane-$i.log"
    done
done

summary=()
for phase in "${PHASES[@]}"; do
    for step in ${phase//|/ }; do
        if [[ -e "$LOGS/$step.status" ]]; then
            summary+=("$step: $(cat "$LOGS/$step.status")")
        else
            summary+=("$step: not run")
        fi
    done
done
echo
echo "make test steps: $(IFS=';'; echo "${summary[*]}" | sed 's/;/, /g')"
exit "$status"
