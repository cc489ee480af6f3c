#!/usr/bin/env bash
# Build the random-weight Whisper models of scripts/make_random_whisper.py into
# build/random-whisper (base.en, small.en, tiny), unless the stamp says that this version of
# the script already built them there. Needs .venv (tiny.en's folder) and .venv-vllm.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
VLLM_VENV=${VLLM_VENV:-.venv-vllm}
OUT=build/random-whisper
STAMP="$OUT/.stamp"
want=$(sha256sum scripts/make_random_whisper.py | cut -d' ' -f1)
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    echo "random-weight Whisper models: up to date in $OUT"
    exit 0
fi
tiny_en=$("$VENV/bin/python" -c "from voxdesk.engine.whisper.models import model_directory; print(model_directory())")
rm -rf "$OUT"
"$VLLM_VENV/bin/python" scripts/make_random_whisper.py "$OUT" --tiny-en "$tiny_en" 2>&1 | grep -v 'it/s\]'
echo "$want" >"$STAMP"
