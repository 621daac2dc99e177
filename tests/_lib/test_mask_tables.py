"""The matrix engine's masked sums (``batch_mask_sums``): the tables of four rows' subset sums
and the rows themselves (a batch too small for tables) give the same bits, so a relabelling's
sums do not depend on its batch or on the thread count; both agree with a dense product."""
import numpy as np
import pytest

from energystats._core._group_sums import group_masks
from energystats._lib import _permutation


def _sums(D, codes, kp, n_threads):
    B = codes.shape[0]
    Q, s = np.empty((B, kp, kp)), np.empty((B, kp))
    _permutation.batch_mask_sums(D, group_masks(np.ascontiguousarray(codes, dtype=np.intp), kp),
                                 D.sum(axis=1), Q, s, n_threads)
    return Q, s


@pytest.mark.parametrize("n", [5, 63, 64, 131, 203])
@pytest.mark.parametrize("kp", [1, 2, 4])
def test_alone_in_a_batch_and_among_many_the_same_bits(n, kp):
    rng = np.random.default_rng(n * 10 + kp)
    D = np.abs(rng.standard_cauchy(size=(n, n)))
    D = D + D.T
    codes = rng.integers(0, kp + 1, size=(20, n))
    Q, s = _sums(D, codes, kp, 2)
    for b in (0, 7, 19):   # one relabelling alone: no tables
        Qb, sb = _sums(D, codes[b:b + 1], kp, 1)
        np.testing.assert_array_equal(Qb[0], Q[b])
        np.testing.assert_array_equal(sb[0], s[b])
    Q1, s1 = _sums(D, codes, kp, 1)
    np.testing.assert_array_equal(Q1, Q)
    # against the dense sums over the one-hot matrices
    onehot = (codes[:, :, None] == np.arange(kp)).astype(float)
    want = np.einsum("bxg,xy,byh->bgh", onehot, D, onehot)
    np.testing.assert_allclose(Q, want, rtol=1e-13, atol=1e-13 * np.abs(D).sum())


def test_an_infinite_entry_outside_the_masks_changes_nothing():
    rng = np.random.default_rng(3)
    n = 70
    D = rng.random((n, n))
    D = D + D.T
    codes = np.ones((9, n), dtype=np.intp)   # group 1 is the last: only group 0 is summed
    codes[:, :30] = 0
    D[65, 66] = D[66, 65] = np.inf            # both points in the last group
    for B in (1, 9):
        Q, _ = _sums(D, codes[:B], 1, 2)
        assert np.isfinite(Q).all()
        np.testing.assert_allclose(Q[:, 0, 0], D[:30, :30].sum(), rtol=1e-14)
