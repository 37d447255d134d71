"""The one exit-code table of the command line (spec ``cli``, CLI-EXIT-001)."""

from __future__ import annotations

OK = 0  #: valid, or done
INVALID = 1  #: the input is invalid or the request was refused
USAGE = 2  #: a usage error, or a file or store that cannot be read or written
INTERNAL = 3  #: a dshkit bug, reported without a traceback
INTERRUPTED = 130  #: interrupted from the terminal (Ctrl-C)
