#!/usr/bin/env bash
# Lays out the installed `voxdesk` namespace as pyproject.toml maps it, as links to the
# repository's folders, in build/namespace/voxdesk. Tools that search sys.path themselves and
# do not follow setuptools' editable-install import hook read it from there: mypy (mypy_path in
# pyproject.toml) and PyInstaller (pathex in installers/voxdesk.spec). Links already right are
# left alone, so two runs at once (make test runs mypy beside the installers) never see a gap.
set -euo pipefail
cd "$(dirname "$0")/.."
root=build/namespace/voxdesk
mkdir -p "$root"
declare -A want=()
for file in voxdesk/* app cli engine resources server ui; do
    want[$(basename "$file")]="../../../$file"
done
for entry in "$root"/*; do
    [[ -e "$entry" || -L "$entry" ]] || continue
    name=$(basename "$entry")
    [[ -n "${want[$name]:-}" ]] || rm -rf "$entry"
done
for name in "${!want[@]}"; do
    [[ "$(readlink "$root/$name" 2>/dev/null)" == "${want[$name]}" ]] || ln -sfn "${want[$name]}" "$root/$name"
done
