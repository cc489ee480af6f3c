#!/usr/bin/env bash
# Builds the Linux installers from the checkout:
#   build/installers/voxdesk_<version>_amd64.deb          (dpkg-deb; the bundle in /opt/voxdesk)
#   build/installers/voxdesk-<version>-linux-x86_64.tar.gz (the same bundle, any distribution)
# from the PyInstaller bundle of installers/voxdesk.spec (build/pyinstaller/dist/voxdesk).
# Nothing is rebuilt when none of its inputs changed (sources, resources, installers/, the
# packages in the environment); --force rebuilds anyway. Usage: scripts/build-linux.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VOXDESK_VENV:-.venv}
OUT=build/installers
DIST=build/pyinstaller/dist
WORK=build/pyinstaller/work
# What the bundle takes from the system besides glibc (tests/installers checks that these cover
# every library the bundle links against and does not carry): PortAudio (loaded with dlopen; it
# brings ALSA), libxcb, OpenGL/EGL and DRM, which must match the system's graphics stack, and the
# Wayland client libraries for Qt's Wayland plugin. Everything else travels in the bundle.
DEPENDS=(libportaudio2 libxcb1 libgl1 libegl1 libdrm2 libwayland-client0 libwayland-cursor0 libwayland-egl1)
RECOMMENDS=(libasound2-plugins fonts-dejavu-core xdotool espeak-ng xdg-utils libnotify-bin)
SUGGESTS=(wtype ydotool)

[[ -x "$VENV/bin/python" ]] || scripts/setup.sh
for tool in dpkg-deb objdump strip; do
    command -v "$tool" >/dev/null || { echo "build-linux: $tool is missing (apt-get install dpkg binutils)" >&2; exit 1; }
done
pinned=$(sed -n 's/^pyinstaller==//p' installers/requirements.txt)
if ! "$VENV/bin/python" -m pip show pyinstaller 2>/dev/null | grep -qx "Version: $pinned"; then
    "$VENV/bin/python" -m pip install -q -r installers/requirements.txt
fi

VERSION=$("$VENV/bin/python" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
DEB="$OUT/voxdesk_${VERSION}_amd64.deb"
TARBALL="$OUT/voxdesk-${VERSION}-linux-x86_64.tar.gz"

inputs() {
    find voxdesk app cli engine server ui resources installers -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -name '*.md' \
        -print0 | sort -z | xargs -0 sha256sum
    sha256sum pyproject.toml scripts/build-linux.sh
    "$VENV/bin/python" -m pip freeze --all --exclude-editable 2>/dev/null
    "$VENV/bin/python" -VV
}
key=$(inputs | sha256sum | cut -c1-16)
stamp="$OUT/.built-$key"
if [[ "${1:-}" != "--force" && -e "$stamp" && -e "$DEB" && -e "$TARBALL" ]]; then
    echo "build-linux: up to date ($DEB, $TARBALL)"
    exit 0
fi
rm -f "$OUT"/.built-*
mkdir -p "$OUT"
started=$SECONDS

scripts/link-namespace.sh
echo "build-linux: PyInstaller bundle (log: $OUT/pyinstaller.log)"
if ! "$VENV/bin/python" -m PyInstaller --noconfirm --log-level WARN --distpath "$DIST" --workpath "$WORK" \
    installers/voxdesk.spec >"$OUT/pyinstaller.log" 2>&1; then
    tail -n 40 "$OUT/pyinstaller.log" >&2
    exit 1
fi
bundle="$DIST/voxdesk"
# Debug information only (about 85 MB: CTranslate2's extension, libpython), where that is safe.
"$VENV/bin/python" installers/linux/strip_debug.py "$bundle/_internal"
# Every file readable by all, nothing writable but by its owner (root once installed); shared
# libraries need no execute bit.
chmod -R u+rwX,go+rX,go-w "$bundle"
find "$bundle/_internal" -type f -name '*.so*' -exec chmod 644 {} +

# The newest glibc symbol version any file in the bundle asks for.
glibc=$(find "$bundle" -type f \( -name '*.so*' -o -perm -u+x \) -print0 | xargs -0 objdump -T 2>/dev/null |
    grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)

echo "build-linux: .deb"
root="$OUT/deb/voxdesk_${VERSION}_amd64"
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
    "$root/usr/share/icons/hicolor/scalable/apps" "$root/usr/share/doc/voxdesk"
cp -a "$bundle" "$root/opt/voxdesk"
ln -s /opt/voxdesk/voxdesk "$root/usr/bin/voxdesk"
install -m 644 installers/linux/voxdesk.desktop "$root/usr/share/applications/voxdesk.desktop"
install -m 644 resources/icons/voxdesk.svg "$root/usr/share/icons/hicolor/scalable/apps/voxdesk.svg"
install -m 644 installers/linux/copyright "$root/usr/share/doc/voxdesk/copyright"
printf 'voxdesk (%s) unstable; urgency=medium\n\n  * Voxdesk %s.\n\n -- Voxdesk contributors <voxdesk@users.noreply.github.com>  %s\n' \
    "$VERSION" "$VERSION" "$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")" |
    gzip -9n >"$root/usr/share/doc/voxdesk/changelog.gz"
chmod 644 "$root/usr/share/doc/voxdesk/changelog.gz"
mkdir -p "$root/usr/share/lintian/overrides"
install -m 644 installers/linux/lintian-overrides "$root/usr/share/lintian/overrides/voxdesk"
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$root/usr/share/applications/voxdesk.desktop"
fi
join() { local IFS=","; echo "$*" | sed 's/,/, /g'; }
cat >"$root/DEBIAN/control" <<EOF
Package: voxdesk
Version: $VERSION
Architecture: amd64
Maintainer: Voxdesk contributors <voxdesk@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6 (>= $glibc), $(join "${DEPENDS[@]}")
Recommends: $(join "${RECOMMENDS[@]}")
Suggests: $(join "${SUGGESTS[@]}")
Section: sound
Priority: optional
Homepage: https://github.com/voxdesk/voxdesk
Description: desktop voice assistant with streaming speech recognition
 Voxdesk shows what you say while you are still speaking and turns it into
 actions (web search, opening applications, typing, timers). Its built-in
 speech engine (Whisper tiny.en through CTranslate2, gated by Silero VAD) runs
 offline on the CPU; remote mode uses any /v1/realtime server such as vLLM.
 .
 This package is a self-contained bundle in /opt/voxdesk: no Python needed.
EOF
# gzip, not xz: on this bundle (mostly compiled code) xz saves a fifth of the size and takes ten
# times as long (xz -6: 240 s, 164 MB; gzip -6: 25 s, 206 MB, on 2 cores). The .deb and the
# tarball are compressed side by side.
echo "build-linux: compressing the .deb and the tarball"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$DEB" >/dev/null &
deb_pid=$!
gzip_program=$(command -v pigz || echo gzip)
tar -C "$DIST" --sort=name --owner=0 --group=0 --numeric-owner --transform "s|^voxdesk|voxdesk-$VERSION|" \
    -I "$gzip_program" -cf "$TARBALL" voxdesk
wait "$deb_pid"

rm -rf "$OUT/deb"
touch "$stamp"
printf 'build-linux: built in %ss: bundle %s, %s %s, %s %s\n' "$((SECONDS - started))" \
    "$(du -sh "$bundle" | cut -f1)" "$DEB" "$(du -h "$DEB" | cut -f1)" "$TARBALL" "$(du -h "$TARBALL" | cut -f1)"
