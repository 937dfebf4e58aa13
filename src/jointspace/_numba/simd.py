"""A dot product in 4-wide vector instructions, summed in the order of MuJoCo's AVX mju_dot.

`dot_row(A, i, b, lo, hi)` is A[i, lo:hi] · b[lo:hi] for a C-contiguous 2-D A and 1-D b,
written directly in LLVM IR (an intrinsic) as MuJoCo's mju_dot_avx and its tail compute
it: s = Σ over the 4-blocks of the lane-wise products (s₀ … s₃, one vector), then
(s₀ + s₂) + (s₁ + s₃), then the remaining 1–3 products summed left to right and added.
Multiplies and adds stay separate (no fused multiply-add), so the result is MuJoCo's to
the last bit for the same operands.

Why an intrinsic: Numba does not vectorize a floating-point sum (reassociation is not
allowed without fastmath, and fastmath would pick its own order), and an inlined Numba
helper copies its array arguments into new variables, each of which takes and drops a
reference through a runtime call per use in a loop. The intrinsic's IR reads the arrays'
data pointers and counts nothing. PGS calls it for every row it visits
(`solver.pgs`): gymnasium's humanoid sweeps 40 rows of 40 entries some 160 times a step.

The indices are not checked: 0 ≤ lo ≤ hi ≤ A.shape[1] ≤ b.shape[0] and 0 ≤ i < A.shape[0]
are the caller's to hold (as for every compiled kernel, which runs without bounds checks).
"""

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["dot_row"]

_F64 = ir.DoubleType()
_V4 = ir.VectorType(_F64, 4)
_I64 = ir.IntType(64)


@intrinsic
def dot_row(typingctx, A, i, b, lo, hi):
    """A[i, lo:hi] · b[lo:hi] (float64, C-contiguous A and b) in MuJoCo's AVX order."""
    if not (isinstance(A, types.Array) and A.ndim == 2 and A.layout == "C"
            and A.dtype == types.float64 and isinstance(b, types.Array) and b.ndim == 1
            and b.layout == "C" and b.dtype == types.float64
            and all(isinstance(t, types.Integer) for t in (i, lo, hi))):
        return None

    def codegen(context, builder, sig, args):
        aty, ity, bty, loty, hity = sig.args
        a_arr = context.make_array(aty)(context, builder, value=args[0])
        b_arr = context.make_array(bty)(context, builder, value=args[2])
        row = context.cast(builder, args[1], ity, types.int64)
        start = context.cast(builder, args[3], loty, types.int64)
        stop = context.cast(builder, args[4], hity, types.int64)
        ncol = builder.extract_value(a_arr.shape, 1)
        pa = builder.gep(a_arr.data, [builder.add(builder.mul(row, ncol), start)])
        pb = builder.gep(b_arr.data, [start])
        n = builder.sub(stop, start)

        def vload(p, k):
            return builder.load(builder.bitcast(builder.gep(p, [k]), _V4.as_pointer()),
                                align=8)

        def product(k):
            return builder.fmul(builder.load(builder.gep(pa, [k])),
                                builder.load(builder.gep(pb, [k])))

        entry = builder.basic_block
        bb_init = builder.append_basic_block("dot.init")
        bb_test = builder.append_basic_block("dot.test")
        bb_body = builder.append_basic_block("dot.body")
        bb_hsum = builder.append_basic_block("dot.hsum")
        bb_tail = builder.append_basic_block("dot.tail")
        bb_t2 = builder.append_basic_block("dot.tail2")
        bb_t3 = builder.append_basic_block("dot.tail3")
        bb_end = builder.append_basic_block("dot.end")
        four = ir.Constant(_I64, 4)
        builder.cbranch(builder.icmp_signed(">=", n, four), bb_init, bb_tail)

        # the first block's products, then one vector sum over the further whole blocks
        builder.position_at_end(bb_init)
        s0 = builder.fmul(vload(pa, ir.Constant(_I64, 0)), vload(pb, ir.Constant(_I64, 0)))
        last = builder.sub(n, four)
        builder.branch(bb_test)
        builder.position_at_end(bb_test)
        k = builder.phi(_I64)
        s = builder.phi(_V4)
        k.add_incoming(four, bb_init)
        s.add_incoming(s0, bb_init)
        builder.cbranch(builder.icmp_signed("<=", k, last), bb_body, bb_hsum)
        builder.position_at_end(bb_body)
        s_next = builder.fadd(s, builder.fmul(vload(pa, k), vload(pb, k)))
        k_next = builder.add(k, four)
        k.add_incoming(k_next, bb_body)
        s.add_incoming(s_next, bb_body)
        builder.branch(bb_test)

        # (s0 + s2) + (s1 + s3)
        builder.position_at_end(bb_hsum)
        pair = builder.fadd(builder.extract_element(s, ir.Constant(_I64, 0)),
                            builder.extract_element(s, ir.Constant(_I64, 2)))
        other = builder.fadd(builder.extract_element(s, ir.Constant(_I64, 1)),
                             builder.extract_element(s, ir.Constant(_I64, 3)))
        whole = builder.fadd(pair, other)
        builder.branch(bb_tail)

        # the 0-3 products left, summed left to right, then added to the blocks' sum
        builder.position_at_end(bb_tail)
        res = builder.phi(_F64)
        res.add_incoming(ir.Constant(_F64, 0.0), entry)
        res.add_incoming(whole, bb_hsum)
        kt = builder.phi(_I64)
        kt.add_incoming(ir.Constant(_I64, 0), entry)
        kt.add_incoming(k, bb_hsum)
        rem = builder.sub(n, kt)
        bb_t1 = builder.append_basic_block("dot.tail1")
        builder.cbranch(builder.icmp_signed(">=", rem, ir.Constant(_I64, 1)), bb_t1, bb_end)
        builder.position_at_end(bb_t1)
        t1 = product(kt)
        r1 = builder.fadd(res, t1)
        builder.cbranch(builder.icmp_signed(">=", rem, ir.Constant(_I64, 2)), bb_t2, bb_end)
        builder.position_at_end(bb_t2)
        t2 = builder.fadd(t1, product(builder.add(kt, ir.Constant(_I64, 1))))
        r2 = builder.fadd(res, t2)
        builder.cbranch(builder.icmp_signed(">=", rem, ir.Constant(_I64, 3)), bb_t3, bb_end)
        builder.position_at_end(bb_t3)
        t3 = builder.fadd(t2, product(builder.add(kt, ir.Constant(_I64, 2))))
        r3 = builder.fadd(res, t3)
        builder.branch(bb_end)

        builder.position_at_end(bb_end)
        out = builder.phi(_F64)
        out.add_incoming(res, bb_tail)
        out.add_incoming(r1, bb_t1)
        out.add_incoming(r2, bb_t2)
        out.add_incoming(r3, bb_t3)
        return out

    return types.float64(A, i, b, lo, hi), codegen
