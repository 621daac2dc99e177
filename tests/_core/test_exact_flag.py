"""`exact` is None, True or False: 1 and 0 were taken for True and False (1 == True) by the
`exact not in (None, True, False)` check of energy_test and independence_test."""
import numpy as np
import pytest

import energystats as es

X = np.arange(8.0)


@pytest.mark.parametrize("call", [
    lambda e: es.independence_test(X, X ** 2, exact=e),
    lambda e: es.energy_test(X[:4], X[4:], exact=e),
    lambda e: es.independence_coefficient_test(X, X ** 2, exact=e),
])
@pytest.mark.parametrize("bad", [1, 0, "yes", 1.0])
def test_only_booleans_or_none(call, bad):
    with pytest.raises(ValueError, match="`exact` must be None, True or False"):
        call(bad)


def test_numpy_booleans_are_booleans():
    a = es.independence_test(X, X ** 2, exact=np.True_)
    b = es.independence_test(X, X ** 2, exact=True)
    assert a.exact and a.pvalue == b.pvalue
