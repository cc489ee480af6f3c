#!/usr/bin/env bash
# Packs the macOS app bundle (build/pyinstaller/dist/Voxdesk.app, from installers/voxdesk.spec run
# on macOS) into build/installers/voxdesk-<version>-macos-<arch>.dmg: a compressed disk image
# with Voxdesk.app and a link to /Applications to drag it onto. Uses only hdiutil (macOS).
# Not run on the Linux development machine: .github/workflows/installers.yml builds and
# smoke-tests it on a GitHub-hosted macOS runner. The app is signed ad hoc, not notarized: the
# first start needs right-click > Open (or System Settings > Privacy & Security > Open Anyway).
# Usage: installers/macos/make-dmg.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")/../.."

APP=build/pyinstaller/dist/Voxdesk.app
VERSION=${1:-$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')}
ARCH=$(uname -m)
OUT=build/installers
DMG="$OUT/voxdesk-${VERSION}-macos-${ARCH}.dmg"

[[ -d "$APP" ]] || { echo "make-dmg: $APP is missing; build it with installers/voxdesk.spec first" >&2; exit 1; }
command -v hdiutil >/dev/null || { echo "make-dmg: hdiutil is missing (this runs on macOS only)" >&2; exit 1; }

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
# ditto keeps the bundle's symlinks, extended attributes and code signature intact.
ditto "$APP" "$staging/Voxdesk.app"
ln -s /Applications "$staging/Applications"
mkdir -p "$OUT"
rm -f "$DMG"
hdiutil create -volname "Voxdesk $VERSION" -srcfolder "$staging" -fs HFS+ -format UDZO -imagekey zlib-level=9 \
    -ov "$DMG" >/dev/null
hdiutil verify "$DMG" >/dev/null
echo "make-dmg: $DMG ($(du -h "$DMG" | cut -f1))"
