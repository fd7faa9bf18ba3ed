"""numpy's and OpenBLAS's kernels are the AVX2 ones on every x86-64 CPU, so results do not depend on it."""

import os
import subprocess
import sys

from gradcli import machine

AVX512 = {"avx2", "fma", "avx512f", "avx512dq"}


def test_only_an_x86_cpu_with_avx512_changes_anything():
    assert machine.settings("x86_64", {"avx2", "fma"}) == {}
    assert machine.settings("aarch64", AVX512) == {}
    assert machine.settings("x86_64", {"avx512f"}) == {}           # no Haswell kernels without AVX2 and FMA
    pinned = machine.settings("x86_64", AVX512)
    assert pinned["OPENBLAS_CORETYPE"] == "Haswell"
    assert {"X86_V4", "AVX512F", "AVX512_SKX"} <= set(pinned["NPY_DISABLE_CPU_FEATURES"].split())


def _fresh(code: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**environment, **env}).stdout


PROBE = """
import os, gradcli, numpy as np
from numpy._core._multiarray_umath import __cpu_features__ as features
print(os.environ.get("OPENBLAS_CORETYPE"), features.get("X86_V4", features.get("AVX512_SKX")))
print(float(np.power(10.0, np.linspace(0, 1, 5))[3]).hex())
"""


def test_this_machine_runs_the_avx2_kernels_and_glibcs_pow():
    flags = machine._cpu_flags()
    first, second = _fresh(PROBE).splitlines()
    if machine.settings(os.uname().machine, flags):
        assert first == "Haswell False"
    else:
        assert first.split()[0] == "None"
    # 10 ** 0.75 as glibc's pow (and PyTorch's) rounds it; numpy's AVX-512 pow gives one unit less
    assert second == (5.623413251903491).hex()


def test_a_users_own_setting_wins():
    first, _ = _fresh(PROBE, OPENBLAS_CORETYPE="Sandybridge").splitlines()
    assert first.split()[0] == "Sandybridge"
