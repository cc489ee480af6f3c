#!/usr/bin/env bash
# Installs .venv-whisperlive: WhisperLive (whisper-live on PyPI) with only what its
# faster-whisper backend imports, for the peer comparison in `make bench`
# (benchmarks/whisperlive.py). whisper-live's own dependency list pulls CUDA, OpenVINO and
# openai-whisper wheels that this backend never imports, so it is installed without them.
# Safe to run again: a finished install is skipped. About 1 minute and 1 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VOXDESK_WHISPERLIVE_VENV:-.venv-whisperlive}
PYTHON=${PYTHON:-python3}
stamp="$VENV/.voxdesk-$(cat requirements/whisperlive.txt scripts/setup-whisperlive.sh | sha256sum | cut -c1-16)"
if [[ -e "$stamp" ]]; then
    echo "setup-whisperlive: ready ($VENV)"
    exit 0
fi
[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install -q)
"${pip[@]}" --upgrade pip
"${pip[@]}" --no-deps whisper-live=="$(sed -n 's/^whisper-live==//p' requirements/whisperlive.txt)"
# torch==2.13.0+cpu is not on PyPI (see scripts/setup-vllm.sh).
if ! "${pip[@]}" -r <(grep -v '^whisper-live' requirements/whisperlive.txt); then
    "${pip[@]}" --extra-index-url https://download.pytorch.org/whl/cpu -r <(grep -v '^whisper-live' requirements/whisperlive.txt)
fi
rm -f "$VENV"/.voxdesk-*
touch "$stamp"
echo "setup-whisperlive: ready ($VENV)"
