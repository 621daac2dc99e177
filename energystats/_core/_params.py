"""Estimator parameters as scikit-learn handles them, for estimators that must work without it.

:class:`Params` gives ``get_params`` / ``set_params``: the parameters are the arguments of
``__init__`` (stored under their own names), as ``sklearn.base.BaseEstimator`` reads them.
"""
from __future__ import annotations

import inspect

__all__ = ["Params"]


class Params:
    """``get_params`` / ``set_params`` as in scikit-learn, without importing it."""

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep=True):
        """The parameters given to ``__init__`` (or set since), by name."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters by name; returns self.  An unknown name is a ValueError."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"Invalid parameter {key!r} for estimator {type(self).__name__}; "
                                 f"valid parameters are {valid}.")
            setattr(self, key, value)
        return self
