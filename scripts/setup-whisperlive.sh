#!/usr/bin/env bash
# Installs .venv-whisperlive: WhisperLive (whisper-live on PyPI) with only what its
# faster-whisper backend imports, for the peer comparison in `make bench`
# (benchmarks/whisperlive.py). whisper-live's own dependency list pulls CUDA, OpenVINO and
# openai-whisper wheels that this backend never imports, so it is installed without them.
# Safe to run again: a finished install is skipped. About 1 minute and 1 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv-lib.sh

venv_begin setup-whisperlive "${VOXDESK_WHISPERLIVE_VENV:-.venv-whisperlive}" \
    requirements/whisperlive.txt scripts/setup-whisperlive.sh scripts/venv-lib.sh
venv_pip --no-deps whisper-live=="$(sed -n 's/^whisper-live==//p' requirements/whisperlive.txt)"
venv_pip_with_cpu_torch -r <(grep -v '^whisper-live' requirements/whisperlive.txt)
venv_end
