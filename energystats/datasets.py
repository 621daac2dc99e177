"""Small real data sets shipped with the package."""
from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_iris", "load_nile"]


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


def load_nile():
    """The annual flow of the Nile at Aswan, 1871–1970 (10⁸ m³): 100 years, one change.

    The classic change-point series: the flow drops after the first Aswan dam was
    built; the accepted change is between 1898 and 1899 (Cobb 1978; Balke 1993).

    Returns
    -------
    Series
        ``volume`` indexed by ``year`` (int).

    References
    ----------
    .. [1] Cobb, G. W. (1978). The problem of the Nile: conditional solution to a
       changepoint problem. Biometrika 65(2), 243–251.
    .. [2] Durbin, J. and Koopman, S. J. (2001). Time Series Analysis by State Space
       Methods. Oxford University Press (the data, public domain).

    Examples
    --------
    >>> from energystats.datasets import load_nile
    >>> nile = load_nile()
    >>> len(nile), int(nile.index[0]), int(nile.index[-1]), nile.name
    (100, 1871, 1970, 'volume')
    """
    with resources.files("energystats").joinpath("data/nile.csv").open("r") as fh:
        df = pd.read_csv(fh)
    return df.set_index("year")["volume"]
