"""Results in a notebook: ``_repr_html_`` for every result object.

A result's HTML is its class name, its text representation (the headline numbers, as
``repr`` prints them) and, where it has one, its ``to_frame()`` table as pandas renders it.
:func:`notebook_display` is a class decorator that adds it; the results of every concept use
it, so that a notebook shows a table where a terminal shows text.
"""
from __future__ import annotations

import html

__all__ = ["notebook_display", "html_repr"]


def html_repr(result):
    """The HTML of a result (see the module)."""
    head = (f"<p><b>{html.escape(type(result).__name__)}</b></p>"
            f"<pre style=\"white-space: pre-wrap\">{html.escape(repr(result))}</pre>")
    to_frame = getattr(result, "to_frame", None)
    if to_frame is None:
        return f"<div>{head}</div>"
    try:
        table = to_frame().to_html()
    except Exception as exc:     # a result whose table needs an argument or fails: say so
        table = f"<p><i>(no table: {html.escape(type(exc).__name__)}: {html.escape(str(exc))})</i></p>"
    return f"<div>{head}{table}</div>"


def notebook_display(cls):
    """Give ``cls`` a ``_repr_html_`` (:func:`html_repr`)."""
    cls._repr_html_ = html_repr
    return cls
