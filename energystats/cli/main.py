"""Command-line interface: ``energystats <command>`` or ``python -m energystats``.

Commands: ``distance``, ``test``, ``disco``, ``dcor``, ``dcor-matrix``, ``gof``, ``cluster``,
``balance``, ``changepoint``, ``screen``, ``conditional``, ``lagged``, ``data`` and ``demo``; run
``energystats <command> --help`` for the options and an example.  Tables go
to standard output (``--format text|csv|json``; JSON is one object per
command whose keys are the fields of the Python result); notes, the seed and
progress go to stderr (silenced by ``--quiet``).

Exit status: 0 success; 2 bad usage or bad data, with a one-line message
that names the file, the column or the option (``--debug`` shows the
traceback instead); 3 an operating-system failure (output could not be
written: a closed pipe or standard output, a full disk, no permission);
4 out of memory; 130 interrupted.

Only the standard library is imported until a command runs, so ``--help``
answers at once; scikit-learn is imported only by ``cluster``.
"""
from __future__ import annotations

import errno
import os
import sys

from .._core._errors import CLIError, EXIT_INTERRUPTED, EXIT_MEMORY, EXIT_OS, EXIT_USAGE
from ._common import _progress, _user_words
from .parser import build_parser

__all__ = ["main"]


# -- running a command -----------------------------------------------------------

def _error(args, msg, kind="error"):
    msg = _user_words(args, msg)
    if sys.stderr is not None:
        try:
            print(f"energystats {getattr(args, 'command', None) or ''}: {kind}: {msg}".replace("  ", " "),
                  file=sys.stderr, flush=True)
        except OSError:  # pragma: no cover - stderr gone too
            pass


def _silence_stdout():
    """Point the stdout descriptor at /dev/null so that the exit-time flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):  # pragma: no cover
        pass


def _option_names(parser, command):
    """``{dest: '--option'}`` of the command's options: the library's argument names that a
    message may use (``solver``, ``pvalue_method``), with the option the user wrote instead."""
    sub = parser._subparsers._group_actions[0].choices[command]
    return {a.dest: max(a.option_strings, key=len) for a in sub._actions
            if a.option_strings and a.dest not in ("help",)}


def _where(args):
    return getattr(args, "file", None) or ", ".join(getattr(args, "files", None) or [])


def main(argv=None):
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args.option_of = _option_names(parser, args.command)
    import warnings

    def one_line_warning(message, category, filename, lineno, file=None, line=None):
        _error(args, str(message), kind=f"warning ({category.__name__})")

    warnings.showwarning = one_line_warning
    if sys.stdout is None:
        _error(args, "standard output is closed; nothing could be written (redirect it to a file "
                     "instead of closing it).")
        return EXIT_OS
    try:
        from .._core._progress import ambient

        with ambient(_progress(args)):  # also for calls without a progress argument of their own
            code = args.func(args)
        sys.stdout.flush()
        return code
    except CLIError as exc:
        if args.debug:
            raise
        _error(args, str(exc))
        return EXIT_USAGE
    except (ValueError, TypeError, KeyError) as exc:
        if args.debug:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        where = _where(args)
        _error(args, f"{where}: {msg}" if where and not str(msg).startswith(where) else msg)
        return EXIT_USAGE
    except BrokenPipeError:
        _silence_stdout()
        _error(args, "the output pipe was closed before all output was written (broken pipe).")
        return EXIT_OS
    except MemoryError:
        if args.debug:
            raise
        _error(args, "out of memory: the data or the number of resamples are too large for this "
                     "machine; try fewer --resamples, fewer rows or columns, or a machine with "
                     "more memory.")
        return EXIT_MEMORY
    except OSError as exc:
        if args.debug:
            raise
        if exc.errno in (errno.EPIPE, errno.EBADF, errno.ENOSPC, errno.EIO, errno.EDQUOT):
            _silence_stdout()
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            reason = f"{reason} (the disk is full)"
        _error(args, f"could not write the output: {reason}.")
        return EXIT_OS
    except KeyboardInterrupt:  # pragma: no cover
        _error(args, "interrupted.")
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
