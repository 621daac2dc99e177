"""pytest configuration for the documentation's doctests.

Run the ``>>>`` examples of every page with::

    python -m pytest docs --doctest-glob='*.rst' -q

(the Python files here are build helpers, not tests).
"""
collect_ignore_glob = ["_build/*", "generated/*", "scripts/*", "conf.py"]
