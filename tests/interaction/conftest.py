"""Fixtures for the interaction tests: the fake libHD built with the system C compiler, a manual clock."""
from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess

import pytest

from haptic_helpers import ManualClock

FAKE_HD_SOURCE = pathlib.Path(__file__).parent / "fake_hd" / "fake_hd.c"


@pytest.fixture(scope="session")
def fake_libhd(tmp_path_factory) -> pathlib.Path:
    """Path of a freshly built fake ``libHD.so`` (soname libHD.so, so pyOpenHaptics' CDLL("libHD.so") finds it)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (cc) is needed to build the fake libHD"
    out = tmp_path_factory.mktemp("fake_hd") / "libHD.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-Wall", "-Werror", "-Wl,-soname,libHD.so", "-o", str(out),
                    str(FAKE_HD_SOURCE), "-lpthread", "-lm"], check=True)
    return out


@pytest.fixture(scope="session")
def fake_hd(fake_libhd):
    """The fake library's test hooks (ctypes), loaded in this process."""
    lib = ctypes.CDLL(str(fake_libhd), mode=ctypes.RTLD_GLOBAL)
    lib.fakehd_frame_count.restype = ctypes.c_long
    lib.fakehd_force_log.restype = ctypes.c_long
    lib.fakehd_force_log.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_long]
    lib.fakehd_last_force.argtypes = [ctypes.POINTER(ctypes.c_double)]
    lib.fakehd_last_torque.argtypes = [ctypes.POINTER(ctypes.c_double)]
    return lib


@pytest.fixture
def clock():
    return ManualClock()
