// SPDX-License-Identifier: GPL-2.0-only
/// A QP creation that falls back to another attr when the first fails
/// (ret = rdma_create_qp(id, pd, &attr); if (ret == -EINVAL) { init_attr =
/// attr; init_attr.cap.max_inline_data = 0; ret = rdma_create_qp(id, pd,
/// &init_attr); }) leaves the first attr holding what it requested: the
/// provider writes the granted caps back only into the attr of the
/// creation that succeeded. Recording attr.cap.max_inline_data after the
/// fallback records the inline size the failed creation asked for, so a
/// later IB_SEND_INLINE post is sized for data the QP was not granted.
/// Reported where the size is read from an attr whose creation a later
/// creation with another attr may have replaced on the path.
///
/// This is the Coccinelle form of the fallback part of patchctl's
/// inline-size rule ("records X, but on this path the QP was created
/// with Y"); its other parts (the guard, the requested size, a failed
/// creation recording 0) are not expressed here.
//
// Confidence: High
// Options: --no-includes --include-headers

virtual report

@fallback depends on report exists@
identifier create = {rdma_create_qp, ib_create_qp, ib_create_qp_kernel};
expression A, B, X, R1, R2;
expression list L1, L2;
position p;
@@
(
R1 = create(L1, &A)
|
create(L1, &A)
)
...
(
R2 = create(L2, &B)
|
create(L2, &B)
)
... when != A = B
    when != R2 = create(...)
X = A.cap.max_inline_data@p

@script:python depends on fallback@
p << fallback.p;
a << fallback.A;
b << fallback.B;
@@
if a.replace(" ", "") != b.replace(" ", ""):
    coccilib.report.print_report(p[0], "inline-size: records %s.cap.max_inline_data, but on this path the QP was created with %s (the creation with %s failed): %s still holds the request" % (a, b, a, a))
