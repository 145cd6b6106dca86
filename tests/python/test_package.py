"""The package as a user's machine sees it: one version from one place, and an extension module
that loads with no CUDA library beside it (CUPTI is loaded at run time, cudart is static)."""

from __future__ import annotations

import os
import subprocess
import sys

import gpufeed
from gpufeed import _native

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def needed_libraries(path: str) -> list:
    """The DT_NEEDED entries of an ELF file, read with the standard library only."""
    import struct

    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "a 64-bit ELF file"
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
                for i in range(e_shnum)]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strtab = sections[dynamic[6]]  # sh_link: its string table
    names = []
    for offset in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, offset)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + value
            names.append(data[start:data.index(b"\0", start)].decode())
    return names


def test_the_version_comes_from_the_version_file():
    with open(os.path.join(ROOT, "VERSION")) as f:
        assert gpufeed.__version__ == f.read().strip()


def test_the_extension_needs_no_cuda_library_to_load():
    needed = needed_libraries(_native.__file__)
    assert needed, "the extension links something (libc at least)"
    assert not [n for n in needed if n.startswith(("libcupti", "libcudart", "libcuda.", "libnvrtc"))], \
        needed


def test_importing_and_profiling_without_a_gpu_never_loads_cupti():
    code = (
        "import gpufeed\n"
        "with gpufeed.profile() as prof:\n"
        "    pass\n"
        "print(''.join(l for l in open('/proc/self/maps') if 'libcupti' in l) or 'none')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=os.environ | {"CUDA_VISIBLE_DEVICES": ""})
    assert out.stdout.strip() == "none", out.stdout
