# cython: language_level=3
"""Double-double arithmetic (Dekker 1971; Knuth's TwoSum, the FMA TwoProduct) and the O(n log n)
1-D distance-covariance sums built on it, shared by :mod:`._dependence` (one pair of columns) and
:mod:`._screen` (many columns against one): the same inline code, so the same bits.

The 1-D path combines sums of order n² (T1 = Σ a_ij b_ij, T2 / n = Σ a_i. b_i. / n, a.. b.. / n²)
whose difference, n² dCov², is of order n for independent data: about log10(n) digits cancel, so
the sums are carried as unevaluated pairs hi + lo (about 32 digits) and combined exactly by the
caller.  Nothing here may be reassociated (no -ffast-math).
"""
from libc.math cimport fma
from libc.string cimport memset

cdef inline void dd_add(double* h, double* l, double bh, double bl) noexcept nogil:
    """(h, l) += (bh, bl)."""
    cdef double s, v, e
    s = h[0] + bh
    v = s - h[0]
    e = (h[0] - (s - v)) + (bh - v) + (l[0] + bl)
    h[0] = s + e
    l[0] = e - (h[0] - s)


cdef inline void dd_mul_d(double ah, double al, double b, double* ph, double* pl) noexcept nogil:
    """(ph, pl) = (ah, al) * b."""
    ph[0] = ah * b
    pl[0] = fma(ah, b, -ph[0]) + al * b


cdef inline void fenwick_add_dd(double* tree, Py_ssize_t n, Py_ssize_t pos, double x, double y,
                                double xyh, double xyl) noexcept nogil:
    """Add (1, x, y, xy) at ``pos`` of the interleaved trees: node k is tree[8k:8k+8] = count,
    Σx, Σy, Σxy, each sum a double-double pair (one cache line per node)."""
    cdef double* node
    pos += 1
    while pos <= n:
        node = tree + 8 * pos
        node[0] += 1.0
        dd_add(&node[1], &node[2], x, 0.0)
        dd_add(&node[3], &node[4], y, 0.0)
        dd_add(&node[5], &node[6], xyh, xyl)
        pos += pos & (-pos)


cdef inline void fenwick_prefix_dd(const double* tree, Py_ssize_t pos, double* q) noexcept nogil:
    """Sums over the positions < pos into q[0:7] = count, Σx (hi, lo), Σy (hi, lo), Σxy (hi, lo)."""
    cdef const double* node
    cdef int t
    for t in range(7):
        q[t] = 0.0
    while pos > 0:
        node = tree + 8 * pos
        q[0] += node[0]
        dd_add(&q[1], &q[2], node[1], node[2])
        dd_add(&q[3], &q[4], node[3], node[4])
        dd_add(&q[5], &q[6], node[5], node[6])
        pos -= pos & (-pos)


cdef inline void centred_moment(double xj, double yj, double xyh, double xyl, const double* q,
                                double* h, double* l) noexcept nogil:
    """(h, l) = Σ_i (x_j − x_i)(y_j − y_i) over the points summarised by q, in double-double."""
    cdef double ph, pl
    dd_mul_d(xyh, xyl, q[0], h, l)              # x_j y_j · count
    dd_mul_d(q[3], q[4], -xj, &ph, &pl)         # − x_j Σy
    dd_add(h, l, ph, pl)
    dd_mul_d(q[1], q[2], -yj, &ph, &pl)         # − y_j Σx
    dd_add(h, l, ph, pl)
    dd_add(h, l, q[5], q[6])                    # + Σxy


cdef inline void dominance_moment(const double* xs, const double* ys, const Py_ssize_t* rank,
                                  Py_ssize_t n, double* tree, double* out) noexcept nogil:
    """out[0:2] = Σ over i < j with rank_i < rank_j of (x_j − x_i)(y_j − y_i), double-double;
    rank is a permutation of 0..n-1; ``tree`` is scratch of 8 (n + 1) doubles."""
    cdef Py_ssize_t j
    cdef double xj, yj, xyh, xyl, h, l
    cdef double q[7]
    memset(tree, 0, 8 * (n + 1) * sizeof(double))
    out[0] = 0.0
    out[1] = 0.0
    for j in range(n):
        xj = xs[j]
        yj = ys[j]
        xyh = xj * yj
        xyl = fma(xj, yj, -xyh)
        fenwick_prefix_dd(tree, rank[j], q)
        centred_moment(xj, yj, xyh, xyl, q, &h, &l)
        dd_add(&out[0], &out[1], h, l)
        fenwick_add_dd(tree, n, rank[j], xj, yj, xyh, xyl)


cdef inline void cross_moment(const double* xs, const double* ys, const Py_ssize_t* yorder,
                              Py_ssize_t n, Py_ssize_t h, const double* parts,
                              double* out) noexcept nogil:
    """out[0:2] = D of :func:`dominance_moment` over all n points split at ``h``: the pairs
    across the halves, in one pass by increasing y (``yorder``: the x positions by increasing
    y) with running sums over the first half, then ``parts[0:2]`` and ``parts[2:4]`` (each
    half's own D), in that order."""
    cdef Py_ssize_t k, j
    cdef double run[7]
    cdef double ch = 0.0, cl = 0.0, xyh, xyl, mh, ml
    cdef int t
    for t in range(7):
        run[t] = 0.0
    for k in range(n):
        j = yorder[k]
        xyh = xs[j] * ys[j]
        xyl = fma(xs[j], ys[j], -xyh)
        if j < h:
            run[0] += 1.0
            dd_add(&run[1], &run[2], xs[j], 0.0)
            dd_add(&run[3], &run[4], ys[j], 0.0)
            dd_add(&run[5], &run[6], xyh, xyl)
        else:
            centred_moment(xs[j], ys[j], xyh, xyl, run, &mh, &ml)
            dd_add(&ch, &cl, mh, ml)
    dd_add(&ch, &cl, parts[0], parts[1])
    dd_add(&ch, &cl, parts[2], parts[3])
    out[0] = ch
    out[1] = cl


cdef inline void sorted_row_sums(const double* s, Py_ssize_t n, double* hi, double* lo,
                                 double* tot) noexcept nogil:
    """hi[k] + lo[k] = Σ_l |s_k − s_l| for s in increasing order: ``s_k (2k − n) − 2 P_k + P_n``
    with the prefix sums ``P_k`` in double-double and the product exact; tot[0:2] = P_n."""
    cdef Py_ssize_t k
    cdef double th = 0.0, tl = 0.0, ph = 0.0, pl = 0.0, h, l, m
    for k in range(n):
        dd_add(&th, &tl, s[k], 0.0)
    for k in range(n):
        m = <double> (2 * k - n)
        h = s[k] * m
        l = fma(s[k], m, -h)
        dd_add(&h, &l, -2.0 * ph, -2.0 * pl)
        dd_add(&h, &l, th, tl)
        hi[k] = h
        lo[k] = l
        dd_add(&ph, &pl, s[k], 0.0)
    tot[0] = th
    tot[1] = tl


cdef inline void moments(const double* x, const double* y, const double* ah, const double* al,
                         const double* bh, const double* bl, Py_ssize_t n,
                         double* out) noexcept nogil:
    """out[0:20]: in order Σx, Σy, Σx², Σy², Σxy, Σa, Σb, Σab, Σa², Σb² (a = ah + al,
    b = bh + bl), each as a double-double pair ``out[2k], out[2k + 1]``."""
    cdef Py_ssize_t i, k
    cdef double p, e, xi, yi, a, b, a2, b2
    for k in range(20):
        out[k] = 0.0
    for i in range(n):
        xi = x[i]
        yi = y[i]
        a = ah[i]
        a2 = al[i]
        b = bh[i]
        b2 = bl[i]
        dd_add(&out[0], &out[1], xi, 0.0)
        dd_add(&out[2], &out[3], yi, 0.0)
        p = xi * xi
        dd_add(&out[4], &out[5], p, fma(xi, xi, -p))
        p = yi * yi
        dd_add(&out[6], &out[7], p, fma(yi, yi, -p))
        p = xi * yi
        dd_add(&out[8], &out[9], p, fma(xi, yi, -p))
        dd_add(&out[10], &out[11], a, a2)
        dd_add(&out[12], &out[13], b, b2)
        p = a * b
        e = fma(a, b, -p) + (a * b2 + a2 * b)
        dd_add(&out[14], &out[15], p, e)
        p = a * a
        e = fma(a, a, -p) + 2.0 * (a * a2)
        dd_add(&out[16], &out[17], p, e)
        p = b * b
        e = fma(b, b, -p) + 2.0 * (b * b2)
        dd_add(&out[18], &out[19], p, e)
