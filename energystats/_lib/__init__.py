"""Compiled kernels (Cython).  Private: call them through the public API.

The kernels never validate user input; :mod:`energystats._validation` does so
before any of them runs, which is what allows them to run without bounds
checks.
"""
