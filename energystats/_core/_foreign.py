"""Tables of other libraries at the input layer: Polars and PyArrow (and any object of the
dataframe interchange protocol) become the pandas objects the rest of the input layer reads,
once, before any check (:func:`foreign_to_pandas`, :func:`foreign_labels`)."""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

__all__ = ["foreign_to_pandas", "foreign_labels"]


#: the types that are never another library's table (checked first, so the common calls cost nothing)
_NATIVE = (np.ndarray, pd.DataFrame, pd.Series, pd.Index, list, tuple, str, bytes, numbers.Number)


def foreign_to_pandas(x, name="X"):
    """A Polars DataFrame/Series, a PyArrow Table/RecordBatch/Array/ChunkedArray, or any other
    object of the dataframe interchange protocol (``__dataframe__``), as the pandas object with
    the same columns (by name), dtypes and values; anything else unchanged.  Tables from these
    libraries have no row index: the pandas object gets the default 0 … n−1, so they pair with
    other input by position, as arrays do.  A Polars LazyFrame is refused (collecting it is
    the user's decision)."""
    if x is None or isinstance(x, _NATIVE):
        return x
    module = type(x).__module__.split(".")[0]
    if module == "polars":
        if not hasattr(x, "to_pandas"):
            raise TypeError(f"`{name}` is a Polars {type(x).__name__}: collect it first "
                            f"(`{name}.collect()`).")
        return x.to_pandas()
    if module == "pyarrow" and hasattr(x, "to_pandas"):
        return x.to_pandas()
    if hasattr(x, "__dataframe__") and not hasattr(x, "__array__"):
        return pd.api.interchange.from_dataframe(x)
    return x


def foreign_labels(labels, name="labels"):
    """One label per row from a Polars Series or a PyArrow array (:func:`foreign_to_pandas`),
    as plain values (a Categorical keeps its categories): they pair with the rows by position,
    having no index; anything else unchanged."""
    conv = foreign_to_pandas(labels, name)
    if conv is labels or not isinstance(conv, pd.Series):
        return conv
    return pd.Categorical(conv) if isinstance(conv.dtype, pd.CategoricalDtype) else conv.to_numpy()
