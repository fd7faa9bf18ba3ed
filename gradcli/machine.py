"""One choice of numpy's and OpenBLAS's kernels on every x86-64 machine, made before numpy is imported."""

import os
import sys

# numpy and OpenBLAS pick their kernels by the CPU they start on. On a CPU with AVX-512 numpy's float64
# exp, log, pow, sin, ... come from another library (not glibc: 1 to 25% of results differ in the last
# bit) and OpenBLAS's matrix kernels sum in another order, so the same script printed other last digits
# on an Intel Xeon than on the AVX2 machines gradcli's expected outputs were made on (pinv, svdvals,
# kaiser_window, logspace, ...). PyTorch's float64 elementary functions give glibc's results on both
# (its pow, for one); where PyTorch itself differs between machines (MKL's LAPACK, its vector math
# library) gradcli keeps one answer everywhere instead of two. A user's own setting of either variable
# wins; without AVX-512 nothing changes.
_NUMPY_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL"


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", "rb") as info:
            for line in info:
                if line.startswith(b"flags"):
                    return set(line.split(b":", 1)[1].decode().split())
    except OSError:
        pass
    return set()


def settings(machine: str, flags: set[str]) -> dict[str, str]:
    """The variables that give the AVX2 kernels on this machine: none but on an x86-64 CPU with AVX-512
    (which has AVX2 and FMA too; without them Haswell's kernels would not run)."""
    if machine != "x86_64" or "avx512f" not in flags or not {"avx2", "fma"} <= flags:
        return {}
    return {"NPY_DISABLE_CPU_FEATURES": _NUMPY_AVX512, "OPENBLAS_CORETYPE": "Haswell"}


def pin_kernels() -> None:
    """Set those variables, unless the user did (no effect once numpy is imported: numpy and OpenBLAS read
    them when they load)."""
    if "numpy" in sys.modules:
        return
    for name, value in settings(os.uname().machine, _cpu_flags()).items():
        os.environ.setdefault(name, value)
