#!/usr/bin/env bash
# Lays out the installed `voxdesk` namespace as pyproject.toml maps it, as links to the
# repository's folders, in build/namespace/voxdesk. Tools that search sys.path themselves and
# do not follow setuptools' editable-install import hook read it from there: mypy (mypy_path in
# pyproject.toml) and PyInstaller (pathex in installers/voxdesk.spec).
set -euo pipefail
cd "$(dirname "$0")/.."
root=build/namespace/voxdesk
rm -rf "$root"
mkdir -p "$root"
for file in voxdesk/*; do
    ln -s "../../../$file" "$root/$(basename "$file")"
done
for folder in app cli engine resources server ui; do
    ln -s "../../../$folder" "$root/$folder"
done
