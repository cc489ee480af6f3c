"""Removes debug information from the shared libraries of a bundle, where that is safe.

    python installers/linux/strip_debug.py BUNDLE_DIR

Only libraries with a .debug_info section are touched (CTranslate2's extension and libpython
carry about 85 MB of it), never the libraries auditwheel vendored into ``*.libs`` folders, and
each stripped file is checked: binutils' strip can leave a file that patchelf edited with a
loadable segment whose file offset and address disagree modulo the page size, which glibc
refuses to load ("ELF load command address/offset not page-aligned"). Such a file gets its
original back. Prints the bytes saved.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

PAGE = 4096
PT_LOAD = 1


def has_debug_info(path: Path) -> bool:
    sections = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True).stdout
    return ".debug_info" in sections


def loadable(path: Path) -> bool:
    """Every PT_LOAD segment of a 64-bit little-endian ELF file has offset ≡ address (mod page)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return False
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for index in range(phnum):
        p_type, _flags, p_offset, p_vaddr = struct.unpack_from("<IIQQ", data, phoff + index * phentsize)
        if p_type == PT_LOAD and (p_vaddr - p_offset) % PAGE:
            return False
    return True


def main() -> int:
    bundle = Path(sys.argv[1])
    saved = 0
    with tempfile.TemporaryDirectory() as scratch:
        for path in sorted(bundle.rglob("*.so*")):
            if path.is_symlink() or not path.is_file() or path.parent.name.endswith(".libs"):
                continue
            if not has_debug_info(path):
                continue
            original = Path(scratch) / "original"
            shutil.copy2(path, original)
            subprocess.run(["strip", "--strip-debug", str(path)], check=True)
            if loadable(path):
                saved += original.stat().st_size - path.stat().st_size
            else:
                shutil.copy2(original, path)
                print(f"strip_debug: kept {path} as it was (stripping broke its segment alignment)")
    print(f"strip_debug: {saved / 1e6:.0f} MB of debug information removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
