"""Errors and exit statuses of the command-line tool (kept free of heavy imports)."""
from __future__ import annotations

__all__ = ["CLIError", "EXIT_OK", "EXIT_USAGE", "EXIT_OS", "EXIT_MEMORY", "EXIT_INTERRUPTED"]

EXIT_OK = 0            #: success
EXIT_USAGE = 2         #: bad usage or bad data (one line names the file, column or option)
EXIT_OS = 3            #: an operating-system failure: output not writable (closed pipe or stdout, full disk, permissions)
EXIT_MEMORY = 4        #: out of memory
EXIT_INTERRUPTED = 130  #: interrupted (Ctrl-C)


class CLIError(Exception):
    """Bad usage or bad data: printed as one line, exit status 2."""
