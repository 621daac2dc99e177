# cython: language_level=3
"""Batched group sums for permutation tests.

The relabellings keep the group sizes; the p-value rule they feed is on the
docs' conventions page (after Phipson and Smyth 2010, "Permutation P-values
should never be zero", Stat. Appl. Genet. Mol. Biol. 9(1)).

A permutation test needs, for every relabelling ``b`` of the pooled sample,
the k×k matrix ``M_b[g, h] = Σ_{x∈C_g^b} Σ_{y∈C_h^b} rho(x, y)``.  Two
kernels evaluate a whole batch of relabellings at once, each relabelling on
its own thread (``prange`` over the batch, GIL released):

* :func:`batch_group_sums` finishes the matrix path: the driver forms
  ``Z = Lᵀ D`` with a BLAS product (``L`` the one-hot matrix of the first
  ``k − 1`` groups of each relabelling), and the kernel folds the rows of
  ``Z`` by label, O(n·k) per relabelling.  The column of the last group comes
  from the row sums of ``D``: ``Σ_{y∈C_{k−1}} rho(x, y) = Σ_y rho(x, y) − Σ_{h<k−1} Z[h, x]``.
* :func:`batch_sorted_group_sums` is the 1-D ``|x − y|`` path: the data are
  sorted once; a relabelling keeps each group's order as the pooled order
  filtered by label, so each relabelling is one O(n·k) pass (the arithmetic of
  :func:`energystats._lib._sorted1d.sorted_group_sums`, batched).

Inputs are validated by the caller (codes in ``0..k−1``, shapes consistent).
"""
import numpy as np

cimport cython
from cython.parallel cimport parallel, prange, threadid

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from energystats._lib._pairwise cimport (ES_MASK_TABLES_FROM, es_ctz64, es_mask_tile, es_simd_init,
                                         kahan_add)
from energystats._lib import SIMD_LEVELS, simd_cap

#: the instruction set of this module's copy of the vector kernels' dispatch (_simd.h)
SIMD_LEVEL = SIMD_LEVELS[es_simd_init(simd_cap())]

#: :func:`batch_mask_sums` builds each thread's tables (128 KiB) for a batch this large or larger
MASK_TABLES_FROM = ES_MASK_TABLES_FROM

#: rows and columns of a tile of :func:`batch_mask_sums` (one bit word of the masks; 32 KiB of
#: the matrix, which stays in a core's L1 cache while the batch passes over it)
cdef enum:
    TILE = 64


@cython.boundscheck(False)
@cython.wraparound(False)
def batch_group_sums(const double[:, ::1] Z,          # IN (B*(k-1), n): rows b*(k-1)+h = Σ_{y∈C_h^b} rho(., y)
                     const Py_ssize_t[:, ::1] codes,  # IN (B, n): group code of each point, 0..k-1
                     const double[::1] rowsum,        # IN (n,): Σ_y rho(x, y)
                     double[:, :, ::1] out,           # OUT (B, k, k): M_b (not symmetrised)
                     int n_threads):
    """Fold ``Z`` by label: ``out[b, g, h] = Σ_{x∈C_g^b} Z[b(k−1)+h, x]``."""
    cdef Py_ssize_t B = codes.shape[0], n = codes.shape[1], k = out.shape[1]
    cdef Py_ssize_t kp = k - 1
    cdef Py_ssize_t b, i, g, h, r0
    cdef double rest, z
    if B == 0:
        return
    with nogil, parallel(num_threads=n_threads):
        for b in prange(B, schedule="static"):
            r0 = b * kp
            for g in range(k):
                for h in range(k):
                    out[b, g, h] = 0.0
            for i in range(n):
                g = codes[b, i]
                rest = rowsum[i]
                for h in range(kp):
                    z = Z[r0 + h, i]
                    out[b, g, h] += z
                    rest = rest - z
                out[b, g, kp] += rest


@cython.boundscheck(False)
@cython.wraparound(False)
def batch_sorted_group_sums(const double[::1] x,            # IN (n,): pooled data, sorted, centred
                            const Py_ssize_t[::1] order,     # IN (n,): x[p] is point order[p]
                            const Py_ssize_t[:, ::1] codes,  # IN (B, n): group of each point (unsorted order)
                            double[:, :, ::1] out,           # OUT (B, k, k): upper-triangle sums P + C
                            int n_threads):
    """Per relabelling, ``out[b, g, h]`` = compensated Σ over sorted pairs
    p < q with labels (g, h) of ``x[q] − x[p]``, the label of ``x[p]`` being
    ``codes[b, order[p]]``; the caller forms ``out + outᵀ``.

    ``out`` must be zero on entry.
    """
    cdef Py_ssize_t B = codes.shape[0], n = codes.shape[1], k = out.shape[1]
    cdef Py_ssize_t b, p, g, h, tid
    cdef double xv
    cdef double* buf
    cdef double* cnt
    cdef double* tot
    cdef double* totc
    cdef double* comp
    if B == 0 or n == 0:
        return
    if n_threads < 1:
        n_threads = 1
    # One scratch row per thread: counts, sums, their compensations, and the
    # compensations of the k×k accumulators.
    scratch_arr = np.zeros((n_threads, 3 * k + k * k), dtype=np.float64)
    cdef double[:, ::1] scratch = scratch_arr
    with nogil, parallel(num_threads=n_threads):
        tid = threadid()
        buf = &scratch[tid, 0]
        cnt = buf
        tot = buf + k
        totc = buf + 2 * k
        comp = buf + 3 * k
        for b in prange(B, schedule="static"):
            for g in range(3 * k + k * k):
                buf[g] = 0.0
            for p in range(n):
                xv = x[p]
                g = codes[b, order[p]]
                for h in range(k):
                    if cnt[h] > 0:
                        kahan_add(&out[b, g, h], &comp[g * k + h],
                                  cnt[h] * xv - (tot[h] + totc[h]))
                cnt[g] += 1.0
                kahan_add(&tot[g], &totc[g], xv)
            for g in range(k):
                for h in range(k):
                    out[b, g, h] += comp[g * k + h]


@cython.boundscheck(False)
@cython.wraparound(False)
def batch_fold_group_sums(const double[:, ::1] D,          # IN (r, n): rows r0 .. r0 + r - 1 of the n×n matrix
                          Py_ssize_t r0,
                          const Py_ssize_t[:, ::1] codes,  # IN (B, n): group code of each point, 0..k-1
                          double[:, :, ::1] out,           # IN/OUT (B, k, k): the rows' sums are added
                          int n_threads):
    """Many groups: ``out[b, g, h] += Σ_{i∈C_g^b, r0≤i<r0+r} Σ_{j∈C_h^b} D[i − r0, j]``.

    The matrix path without one-hot matrices: O(r·n) per relabelling and no
    memory beyond ``out`` and one k-vector per thread, where the one-hot
    product needs O(k·n) per relabelling.  Each row is folded into a k-vector
    (at most n terms), which is then added to its group's row of ``out``; the
    order of every sum is fixed (rows, then columns, in order), so the result
    does not depend on the number of threads.
    """
    cdef Py_ssize_t B = codes.shape[0], n = codes.shape[1], k = out.shape[1], r = D.shape[0]
    cdef Py_ssize_t b, i, j, h, g, tid
    cdef double* tmp
    if B == 0 or r == 0:
        return
    if n_threads < 1:
        n_threads = 1
    # four interleaved k-vectors per thread: consecutive columns go to different
    # accumulators, so equal codes do not chain every addition on one address
    scratch_arr = np.zeros((n_threads, 4 * k), dtype=np.float64)
    cdef double[:, ::1] scratch = scratch_arr
    cdef Py_ssize_t n4 = n - n % 4
    with nogil, parallel(num_threads=n_threads):
        tid = threadid()
        tmp = &scratch[tid, 0]
        for b in prange(B, schedule="static"):
            for i in range(r):
                for h in range(4 * k):
                    tmp[h] = 0.0
                for j in range(0, n4, 4):
                    tmp[codes[b, j]] += D[i, j]
                    tmp[k + codes[b, j + 1]] += D[i, j + 1]
                    tmp[2 * k + codes[b, j + 2]] += D[i, j + 2]
                    tmp[3 * k + codes[b, j + 3]] += D[i, j + 3]
                for j in range(n4, n):
                    tmp[codes[b, j]] += D[i, j]
                g = codes[b, r0 + i]
                for h in range(k):
                    out[b, g, h] += (tmp[h] + tmp[k + h]) + (tmp[2 * k + h] + tmp[3 * k + h])


@cython.boundscheck(False)
@cython.wraparound(False)
def batch_mask_sums(const double[:, ::1] D,           # IN (n, n): symmetric
                    const uint64_t[:, :, ::1] bits,   # IN (B, kp, W), W = ceil(n / 64): bit t of
                                                      #    word w of [b, g] set when point 64w + t
                                                      #    is in group g under relabelling b
                    const double[::1] rowsum,         # IN (n,): Σ_y D[x, y]
                    double[:, :, ::1] out,            # OUT (B, kp, kp)
                    double[:, ::1] s,                 # OUT (B, kp): Σ_{x∈C_g^b} rowsum[x]
                    int n_threads):
    """``out[b, g, h] = Σ_{x∈C_g^b} Σ_{y∈C_h^b} D[x, y]`` for the groups g, h < kp, read from
    the lower block triangle of the symmetric ``D`` and the group masks alone (no one-hot
    matrix, no product with the points of the other groups).

    ``D`` is cut into tiles of 64×64 entries.  A tile I > J adds ``Σ_{x∈I∩C_g, y∈J∩C_h}`` to a
    sum ``L[g, h]`` that also stands for its mirror image; a diagonal tile adds to ``E[g, h]``;
    then ``M = L + Lᵀ + E``.  ``s[b, g]`` adds the row sums of group g's points in increasing
    order, compensated (the caller recovers the sums with the last group from them, so their
    rounding errors reach the statistic magnified).  Each relabelling's sums take the tiles in
    the same order (``es_mask_tile``: a tile's column sums over group g's rows from tables of
    the sums of every subset of four rows, the columns of group h kept, tiles added with
    compensation), whichever thread serves it, so the results do not depend on ``n_threads``.
    The threads split the batch; each passes over the tiles once, building the tile's tables
    (16 additions per entry of the tile) and serving its relabellings from them.  Work per
    relabelling and group: about n²/8 additions in vector lanes (one table row per four rows),
    then kp masked folds of 64 column sums per tile; only the points of group g are visited
    for the row sums of g.
    """
    cdef Py_ssize_t n = D.shape[0], B = bits.shape[0], kp = bits.shape[1], W = bits.shape[2]
    cdef Py_ssize_t nt, t, b0, b1, r, c, g, h, nr, nc, w, astride = 2 * kp * kp * 16
    cdef uint64_t word
    cdef double[:, :, :, :, ::1] acc
    cdef double[:, ::1] part, lut
    cdef double x, y, z, zc
    if B == 0 or kp == 0:
        return
    acc = np.zeros((B, 2, kp, kp, 16))  # eight lanes' sums, then their rounding errors
    nt = max(1, min(n_threads, B))
    part = np.empty((B, kp * kp * 8))   # a tile's eight-lane totals (es_mask_tile's scratch)
    # each thread's tables of the rows' subset sums (none for a batch too small to use them)
    lut = np.empty((nt, 8 * 16 * 16 * 8 if B >= ES_MASK_TABLES_FROM else 1))
    with nogil, parallel(num_threads=nt):
        for t in prange(nt, schedule="static"):
            b0 = t * B // nt
            b1 = (t + 1) * B // nt
            if b1 > b0:
                for r in range(W):
                    nr = min(TILE, n - r * TILE)
                    for c in range(r + 1):
                        nc = min(TILE, n - c * TILE)
                        es_mask_tile(&D[r * TILE, c * TILE], n, nr, nc, &bits[b0, 0, r], kp * W,
                                     &bits[b0, 0, c], kp * W, W, kp, &acc[b0, 0 if c < r else 1, 0, 0, 0],
                                     astride, b1 - b0, &part[b0, 0], &lut[t, 0])
        for t in prange(B, schedule="static"):
            for g in range(kp):
                for h in range(kp):
                    x = _lanes(&acc[t, 0, g, h, 0])
                    y = _lanes(&acc[t, 0, h, g, 0])
                    z = _lanes(&acc[t, 1, g, h, 0])
                    out[t, g, h] = (x + y) + z
                z = 0.0
                zc = 0.0
                for w in range(W):
                    word = bits[t, g, w]
                    while word:
                        kahan_add(&z, &zc, rowsum[w * TILE + es_ctz64(word)])
                        word = word & (word - 1)
                s[t, g] = z + zc


cdef inline double _lanes(const double* v) noexcept nogil:
    """The eight compensated lanes' sum (lane l: ``v[l] + v[8 + l]``) in es_sum's order."""
    return (((v[0] + v[8]) + (v[4] + v[12])) + ((v[2] + v[10]) + (v[6] + v[14]))) + \
        (((v[1] + v[9]) + (v[5] + v[13])) + ((v[3] + v[11]) + (v[7] + v[15])))


# -- the relabellings' draws -------------------------------------------------------------------

cdef extern from "numpy/random/bitgen.h":
    ctypedef struct bitgen_t:
        void* state
        uint64_t (*next_uint64)(void* st) noexcept nogil
        uint32_t (*next_uint32)(void* st) noexcept nogil
        double (*next_double)(void* st) noexcept nogil
        uint64_t (*next_raw)(void* st) noexcept nogil

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid

ctypedef fused shuffled:
    uint8_t
    int32_t
    int64_t


cdef inline uint64_t bounded(bitgen_t* bg, uint64_t top) noexcept nogil:
    """A uniform integer in [0, top]: the smallest all-ones mask covering ``top``, draws
    masked to it until one is at most ``top`` (32-bit draws while ``top`` fits in 32 bits),
    the rule of NumPy's ``random_interval``, so that the same generator state gives the
    same integers as NumPy's shuffles."""
    cdef uint64_t mask = top, v
    if top == 0:
        return 0
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    if (top >> 32) == 0:
        while True:
            v = bg.next_uint32(bg.state) & mask
            if v <= top:
                return v
    while True:
        v = bg.next_uint64(bg.state) & mask
        if v <= top:
            return v


cdef extern from *:
    """
    /* NumPy's PCG64 (XSL-RR 128/64: step the 128-bit LCG, then output from the new state),
       inline, for the shuffle's hot loop.  Its state is read from and written back to the
       bit generator's documented ``state`` dictionary.  Without a 128-bit integer type (MSVC)
       or on a big-endian machine the shuffle calls the bit generator's own functions. */
    #if defined(__SIZEOF_INT128__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define ES_HAVE_PCG64 1
    #define ES_PCG64_BLOCK 256
    typedef unsigned __int128 es_u128;
    /* The 64-bit outputs are made ES_PCG64_BLOCK at a time; read as 32-bit words they are
       NumPy's 32-bit draws (each output's low half first, its high half kept for the next
       draw), so a draw is one load.  ``base`` is the state before the block, ``skip`` 1 while
       the block is the single half-word the generator had kept. */
    typedef struct {
        es_u128 state, inc, base;
        uint64_t block[ES_PCG64_BLOCK];
        Py_ssize_t pos, end, skip;
        int has_uint32;
        uint32_t uinteger;
    } es_pcg64;
    static inline uint64_t es_pcg64_step(es_u128 *state, es_u128 inc) {
        const es_u128 mult = ((es_u128)0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL;
        uint64_t x;
        unsigned rot;
        *state = *state * mult + inc;
        x = (uint64_t)(*state >> 64) ^ (uint64_t)*state;
        rot = (unsigned)(*state >> 122);
        return (x >> rot) | (x << ((64u - rot) & 63u));
    }
    static inline void es_pcg64_set(es_pcg64 *g, uint64_t s_hi, uint64_t s_lo,
                                    uint64_t i_hi, uint64_t i_lo, int has, uint32_t u) {
        g->state = ((es_u128)s_hi << 64) | s_lo;
        g->inc = ((es_u128)i_hi << 64) | i_lo;
        g->base = g->state;
        g->uinteger = u;
        if (has) {  /* the kept half-word first: word 1 of a one-output block */
            g->block[0] = (uint64_t)u << 32;
            g->pos = 1;
            g->end = 2;
            g->skip = 1;
        } else {
            g->pos = g->end = g->skip = 0;
        }
    }
    static void es_pcg64_refill(es_pcg64 *g) {
        Py_ssize_t k;
        g->base = g->state;
        for (k = 0; k < ES_PCG64_BLOCK; k++)
            g->block[k] = es_pcg64_step(&g->state, g->inc);
        g->pos = 0;
        g->end = 2 * ES_PCG64_BLOCK;
        g->skip = 0;
    }
    /* The generator as NumPy would hold it after the draws made: the block's base state
       advanced by the outputs used, the half-word of the last output kept if unused. */
    static inline void es_pcg64_finish(es_pcg64 *g) {
        Py_ssize_t used = (g->pos + 1) / 2 - g->skip, k;
        g->state = g->base;
        for (k = 0; k < used; k++)
            es_pcg64_step(&g->state, g->inc);
        /* NumPy's word kept last (stale once used, as NumPy leaves it) */
        g->has_uint32 = (int)(g->pos & 1);
        if (g->has_uint32)
            g->uinteger = ((const uint32_t *)g->block)[g->pos];
        else if (g->pos > 0)
            g->uinteger = ((const uint32_t *)g->block)[g->pos - 1];
    }
    static inline uint64_t es_pcg64_state_hi(const es_pcg64 *g) { return (uint64_t)(g->state >> 64); }
    static inline uint64_t es_pcg64_state_lo(const es_pcg64 *g) { return (uint64_t)g->state; }
    /* Fisher-Yates on each row, from the last position down, with NumPy's bounded draws
       (the smallest all-ones mask over i, 32-bit draws masked until one is at most i), one
       32-bit word a step and no data-dependent branch: a rejected word swaps position i with
       itself and leaves i where it was.  The read position lives in a local: the rows' byte
       stores could alias the struct. */
    #define ES_PCG64_SHUFFLE(NAME, T)                                                   \\
    static void NAME(es_pcg64 *g, T *out, Py_ssize_t count, Py_ssize_t n) {            \\
        const uint32_t *words = (const uint32_t *)g->block;                             \\
        Py_ssize_t pos = g->pos, end = g->end, r;                                       \\
        uint32_t i, v, j, ok;                                                           \\
        T t, *row;                                                                      \\
        for (r = 0; r < count; r++) {                                                   \\
            row = out + r * n;                                                          \\
            i = (uint32_t)(n - 1);                                                      \\
            while (i > 0) {                                                             \\
                if (pos == end) {                                                       \\
                    es_pcg64_refill(g);                                                 \\
                    pos = 0;                                                            \\
                    end = g->end;                                                       \\
                }                                                                       \\
                v = words[pos++] & (0xFFFFFFFFu >> __builtin_clz(i));                   \\
                ok = v <= i;                                                            \\
                j = ok ? v : i;                                                         \\
                t = row[j];                                                             \\
                row[j] = row[i];                                                        \\
                row[i] = t;                                                             \\
                i -= ok;                                                                \\
            }                                                                           \\
        }                                                                               \\
        g->pos = pos;                                                                   \\
    }
    ES_PCG64_SHUFFLE(es_pcg64_shuffle_u8, uint8_t)
    ES_PCG64_SHUFFLE(es_pcg64_shuffle_i32, int32_t)
    ES_PCG64_SHUFFLE(es_pcg64_shuffle_i64, int64_t)
    #else
    #define ES_HAVE_PCG64 0
    typedef struct { int has_uint32; uint32_t uinteger; } es_pcg64;
    static inline void es_pcg64_set(es_pcg64 *g, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
                                    int has, uint32_t u) { g->has_uint32 = has; g->uinteger = u; }
    static inline void es_pcg64_finish(es_pcg64 *g) { }
    static inline uint64_t es_pcg64_state_hi(const es_pcg64 *g) { return 0; }
    static inline uint64_t es_pcg64_state_lo(const es_pcg64 *g) { return 0; }
    static void es_pcg64_shuffle_u8(es_pcg64 *g, uint8_t *o, Py_ssize_t c, Py_ssize_t n) { }
    static void es_pcg64_shuffle_i32(es_pcg64 *g, int32_t *o, Py_ssize_t c, Py_ssize_t n) { }
    static void es_pcg64_shuffle_i64(es_pcg64 *g, int64_t *o, Py_ssize_t c, Py_ssize_t n) { }
    #endif
    """
    int ES_HAVE_PCG64
    ctypedef struct es_pcg64:
        int has_uint32
        uint32_t uinteger
    void es_pcg64_set(es_pcg64* g, uint64_t s_hi, uint64_t s_lo, uint64_t i_hi, uint64_t i_lo,
                      int has, uint32_t u) noexcept nogil
    uint64_t es_pcg64_state_hi(const es_pcg64* g) noexcept nogil
    uint64_t es_pcg64_state_lo(const es_pcg64* g) noexcept nogil
    void es_pcg64_finish(es_pcg64* g) noexcept nogil
    void es_pcg64_shuffle_u8(es_pcg64* g, uint8_t* out, Py_ssize_t count, Py_ssize_t n) noexcept nogil
    void es_pcg64_shuffle_i32(es_pcg64* g, int32_t* out, Py_ssize_t count, Py_ssize_t n) noexcept nogil
    void es_pcg64_shuffle_i64(es_pcg64* g, int64_t* out, Py_ssize_t count, Py_ssize_t n) noexcept nogil


cdef uint64_t _M64 = 0xFFFFFFFFFFFFFFFF


@cython.boundscheck(False)
@cython.wraparound(False)
def shuffle_rows(object bit_generator,      # IN numpy.random.BitGenerator (its lock is held)
                 shuffled[:, ::1] out):      # IN/OUT (count, n): each row shuffled in place
    """Fisher–Yates on every row in turn, from the last position down (position i swapped
    with a uniform j in [0, i]): row r is what NumPy's ``Generator.permuted(out, axis=1)``
    makes of it from the same state — the same draws in the same order — without its
    per-element generic copies.  The generator's state advances as NumPy's would."""
    cdef object capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        raise TypeError("shuffle_rows: not a NumPy BitGenerator")
    cdef bitgen_t* bg = <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")
    cdef Py_ssize_t count = out.shape[0], n = out.shape[1], r, i, j
    cdef shuffled t
    cdef es_pcg64 g
    cdef object st, inner, s, inc
    if ES_HAVE_PCG64 and type(bit_generator) is np.random.PCG64 and 0 < n <= 0xFFFFFFFF and count:
        # PCG64 (default_rng's) inline: NumPy's step and output, its state moved in and out
        # through the bit generator's ``state`` dictionary (the tests check that the rows and
        # the state after them are NumPy's, the kept half-word included)
        with bit_generator.lock:
            st = bit_generator.state
            inner = st["state"]
            s, inc = int(inner["state"]), int(inner["inc"])
            es_pcg64_set(&g, <uint64_t> (s >> 64), <uint64_t> (s & _M64), <uint64_t> (inc >> 64),
                         <uint64_t> (inc & _M64), <int> st["has_uint32"], <uint32_t> st["uinteger"])
            with nogil:
                if shuffled is uint8_t:
                    es_pcg64_shuffle_u8(&g, &out[0, 0], count, n)
                elif shuffled is int32_t:
                    es_pcg64_shuffle_i32(&g, &out[0, 0], count, n)
                else:
                    es_pcg64_shuffle_i64(&g, &out[0, 0], count, n)
                es_pcg64_finish(&g)
            inner["state"] = (int(es_pcg64_state_hi(&g)) << 64) | int(es_pcg64_state_lo(&g))
            st["has_uint32"] = int(g.has_uint32)
            st["uinteger"] = int(g.uinteger)
            bit_generator.state = st
        return
    with bit_generator.lock:
        with nogil:
            for r in range(count):
                for i in range(n - 1, 0, -1):
                    j = <Py_ssize_t> bounded(bg, <uint64_t> i)
                    t = out[r, j]
                    out[r, j] = out[r, i]
                    out[r, i] = t
