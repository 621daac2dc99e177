"""Small real data sets shipped with the package."""
from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_iris"]


def load_iris():
    """Fisher's (Anderson's) iris measurements: 150 flowers, 4 features, 3 species.

    Returns
    -------
    DataFrame
        Columns ``sepal_length``, ``sepal_width``, ``petal_length``,
        ``petal_width`` (cm) and ``species`` (categorical: setosa, versicolor,
        virginica).

    References
    ----------
    .. [1] Fisher, R. A. (1936). The use of multiple measurements in taxonomic
       problems. Annals of Eugenics 7(2), 179–188.

    Examples
    --------
    >>> from energystats.datasets import load_iris
    >>> df = load_iris()
    >>> df.shape
    (150, 5)
    >>> df["species"].value_counts().sort_index().tolist()
    [50, 50, 50]
    """
    with resources.files("energystats").joinpath("data/iris.csv").open("r") as fh:
        df = pd.read_csv(fh)
    df["species"] = pd.Categorical(df["species"], categories=["setosa", "versicolor", "virginica"])
    return df
