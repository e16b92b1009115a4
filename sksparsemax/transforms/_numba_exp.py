"""A vectorisable exp for the compiled kernels: ``exp(x)`` for ``x <= 0``.

libm's ``exp`` is a call per entry, which LLVM cannot vectorise; this one is
a polynomial evaluated in SIMD, within 1 ulp of libm's. Used by the top-k
mapping on short rows and by the softmax and top-k loss kernels; imported
only when the numba backend is in effect.
"""

from numba import njit, types
from numba.extending import intrinsic

from ._numba_rows import _JIT_INLINE


@intrinsic
def _f64_as_i64(typingctx, x):
    """The bits of a float64 as an int64 (a bit cast, free in machine code)."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return sig, codegen


@intrinsic
def _i64_as_f64(typingctx, x):
    """The float64 whose bits are the int64 ``x`` (a bit cast)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return sig, codegen


# exp_nonpositive: 1.5 * 2**52, the constant that rounds a float64 of
# magnitude below 2**51 to an integer when added and subtracted.
_ROUND = 6755399441055744.0
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in a part with trailing zeros
_LN2_LO = 1.90821492927058770002e-10  # ... and the rest (Cody and Waite)
# Interpolation of exp on [-ln(2)/2, ln(2)/2] at the 12 Chebyshev nodes
# (coefficients of r^11 down to r^2; those of r and 1 are 1): relative error
# below 2e-17.
_E11 = 2.5110037605963777e-08
_E10 = 2.763263963904103e-07
_E9 = 2.755724091857897e-06
_E8 = 2.4801485482328494e-05
_E7 = 0.00019841269890047113
_E6 = 0.0013888888952314775
_E5 = 0.008333333333319601
_E4 = 0.0416666666664881
_E3 = 0.1666666666666668
_E2 = 0.5000000000000019


@njit(**_JIT_INLINE)
def _pow2(n):
    """``2.0 ** n`` for an integer-valued float64 ``-1022 <= n <= 1023``, exactly.

    ``n + _ROUND + 1023`` holds ``n + 1023`` in its low mantissa bits; shifted
    up by 52 they are the exponent field of the result.
    """
    return _i64_as_f64(_f64_as_i64(n + (_ROUND + 1023.0)) << 52)


@njit(**_JIT_INLINE)
def exp_nonpositive(x):
    """``exp(x)`` for a float64 ``x <= 0`` (``-inf`` included), branch-free.

    libm's ``exp`` is an opaque call, so a loop that calls it is not
    vectorised; this one is plain arithmetic that LLVM turns into SIMD code.
    The reduction ``x = n ln 2 + r`` (``|r| <= ln(2)/2``, ``n`` rounded to
    nearest, ``ln 2`` in two parts), a degree-11 polynomial for ``exp(r)``
    and the scaling by ``2^n`` in two exact factors (so that subnormal
    results come out right) give results within 1 ulp of the correctly
    rounded value. Below -746 the result is 0, as ``exp`` gives. Compiled
    with ``fastmath={"contract"}`` in the caller, the polynomial is
    evaluated with fused multiply-adds.
    """
    x = x if x > -746.0 else -746.0
    n = (x * _LOG2E + _ROUND) - _ROUND
    r = (x - n * _LN2_HI) - n * _LN2_LO
    p = _E11 * r + _E10
    p = p * r + _E9
    p = p * r + _E8
    p = p * r + _E7
    p = p * r + _E6
    p = p * r + _E5
    p = p * r + _E4
    p = p * r + _E3
    p = p * r + _E2
    p = p * r + 1.0
    p = p * r + 1.0
    n1 = (n * 0.5 + _ROUND) - _ROUND
    return (p * _pow2(n1)) * _pow2(n - n1)
