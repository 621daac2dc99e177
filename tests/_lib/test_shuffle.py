"""The compiled shuffle of the relabellings draws what NumPy's Generator.permuted draws: the same
rows from the same state, and the state advanced alike, for every bit generator and value type
(the p-values of every permutation test depend on it)."""
import numpy as np
import pytest

from energystats._core._permutation import draw_permutations
from energystats._lib import _permutation


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.MT19937, np.random.Philox,
                                    np.random.SFC64, np.random.PCG64DXSM])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 2, 3, 17, 256, 2001])
def test_same_rows_and_state_as_numpy(bitgen, dtype, n):
    for seed in (0, 12345):
        values = (np.arange(n) % 200).astype(dtype)
        ours, theirs = np.random.Generator(bitgen(seed)), np.random.Generator(bitgen(seed))
        a = np.broadcast_to(values, (5, n)).copy()
        _permutation.shuffle_rows(ours.bit_generator, a)
        b = np.broadcast_to(values, (5, n)).copy()
        theirs.permuted(b, axis=1, out=b)
        np.testing.assert_array_equal(a, b)
        # the state advanced alike (with PCG64's buffered half-word): the next draws agree
        np.testing.assert_array_equal(ours.integers(0, 2**32, 5, dtype=np.uint32),
                                      theirs.integers(0, 2**32, 5, dtype=np.uint32))
        assert ours.random() == theirs.random()


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.SFC64])
@pytest.mark.parametrize("before", [1, 2, 3, 511, 512, 513])
def test_from_a_generator_holding_half_a_word(bitgen, before):
    """The inline PCG64 takes the half-word NumPy keeps after an odd number of 32-bit draws
    first, and leaves the generator as NumPy would (state, kept half-word) whatever the
    number of draws made before and after, across its blocks of 256 outputs."""
    for n in (2, 3, 700):
        ours, theirs = np.random.Generator(bitgen(5)), np.random.Generator(bitgen(5))
        ours.integers(0, 2**32, before, dtype=np.uint32)
        theirs.integers(0, 2**32, before, dtype=np.uint32)
        a = np.broadcast_to(np.arange(n, dtype=np.int64), (3, n)).copy()
        b = a.copy()
        _permutation.shuffle_rows(ours.bit_generator, a)
        theirs.permuted(b, axis=1, out=b)
        np.testing.assert_array_equal(a, b)
        _assert_same_state(ours.bit_generator.state, theirs.bit_generator.state)


def _assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            _assert_same_state(a[key], b[key])
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_draw_permutations_rows_are_numpy_permutations():
    """Row r is what the r-th call rng.permutation(values) gives (the documented contract)."""
    values = np.arange(50) * 3
    got = draw_permutations(np.random.default_rng(7), values, 4)
    rng = np.random.default_rng(7)
    want = np.array([rng.permutation(values) for _ in range(4)])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == values.dtype


def test_a_range_wider_than_32_bits_uses_64_bit_draws():
    # numpy's rule switches to 64-bit draws for a bound past 2**32 - 1; no row is that long
    # here, but the bound helper is exercised through the rows of length 1 and 2 as the edges
    a = np.zeros((3, 1), dtype=np.int64)
    _permutation.shuffle_rows(np.random.PCG64(0), a)
    np.testing.assert_array_equal(a, 0)


@pytest.mark.parametrize("shape", [(3, 0), (0, 5), (0, 0)])
def test_empty_rows_draw_nothing(shape):
    g = np.random.PCG64(9)
    before = g.state
    a = np.zeros(shape, dtype=np.uint8)
    _permutation.shuffle_rows(g, a)
    _assert_same_state(g.state, before)


def test_not_a_bit_generator():
    class Fake:
        capsule = object()
        lock = None

    with pytest.raises(TypeError, match="BitGenerator"):
        _permutation.shuffle_rows(Fake(), np.zeros((1, 3), dtype=np.int64))
