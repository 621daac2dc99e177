"""The command line reads every float of a CSV exactly, whatever pandas' default parser does
(pandas 3.0 rounds some 17-digit numbers in the last place unless asked for round trips)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from energystats.cli import _io


def test_csv_floats_are_read_exactly(tmp_path):
    X = np.random.default_rng(0).normal(size=(200, 3))
    path = tmp_path / "x.csv"
    pd.DataFrame(X, columns=list("abc")).to_csv(path, index=False)
    df = _io.read_table(str(path))
    np.testing.assert_array_equal(df.to_numpy(), X)


def test_the_probe_number_is_one_the_default_parser_may_round():
    # the probe is a 17-digit number; its exact parse is what the options must give
    import io

    text = "0.10490011715303971"
    got = pd.read_csv(io.StringIO(f"a\n{text}\n"), **_io._EXACT_FLOATS)["a"].iloc[0]
    assert float(got) == float(text)
