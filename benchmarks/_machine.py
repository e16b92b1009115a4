"""What the benchmark reports record of the machine, beyond its architecture.

The ratios against ``scipy.special.softmax`` depend on the processor: NumPy
dispatches its ``exp`` to the widest SIMD extension the CPU offers (AVX-512
on ``X86_V4``), which makes softmax several times faster than on a machine
without it, while the compiled kernels use what LLVM makes of the same CPU.
So the reports name the CPU model and NumPy's ``exp`` target.
"""

import platform
from pathlib import Path


def cpu_model():
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def numpy_exp_simd():
    """The SIMD target of NumPy's float64 ``exp`` here, or None where NumPy does not tell.

    From ``numpy.lib.introspect.opt_func_info`` (recent NumPy releases).
    """
    try:
        from numpy.lib.introspect import opt_func_info

        info = opt_func_info(func_name="^exp$", signature="float64")
        return info["exp"]["dd"]["current"]
    except Exception:  # older NumPy, or another layout of its answer
        return None
