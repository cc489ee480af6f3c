# Sourced by the setup scripts: a virtual environment installed once per version of its
# inputs. `venv_begin NAME VENV INPUT...` exits the script when VENV was already installed
# from these inputs (their contents' hash names a stamp file in VENV), else creates VENV if
# needed and upgrades pip; `venv_end` writes the stamp once the install has finished.

venv_begin() {
    VENV_NAME=$1 VENV_DIR=$2
    shift 2
    VENV_STAMP="$VENV_DIR/.voxdesk-$(cat "$@" | sha256sum | cut -c1-16)${VENV_STAMP_SUFFIX:-}"
    if [[ -e "$VENV_STAMP" ]]; then
        echo "$VENV_NAME: ready ($VENV_DIR)"
        exit 0
    fi
    [[ -x "$VENV_DIR/bin/python" ]] || "${PYTHON:-python3}" -m venv "$VENV_DIR"
    venv_pip --upgrade pip
}

venv_pip() {
    "$VENV_DIR/bin/python" -m pip install -q "$@"
}

# torch==2.13.0+cpu is not on PyPI: some machines keep the wheel locally (pip's find-links);
# everywhere else it comes from PyTorch's CPU wheel index.
venv_pip_with_cpu_torch() {
    if ! venv_pip "$@"; then
        echo "$VENV_NAME: retrying with PyTorch's CPU wheel index for torch==2.13.0+cpu"
        venv_pip --extra-index-url https://download.pytorch.org/whl/cpu "$@"
    fi
}

venv_end() {
    rm -f "$VENV_DIR"/.voxdesk-*
    touch "$VENV_STAMP"
    echo "$VENV_NAME: ready ($VENV_DIR)"
}
