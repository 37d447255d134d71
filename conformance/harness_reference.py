"""The reference wrapped as a subprocess harness: ``python -m dshkit.conformance.harness_reference``.

It speaks the kit's JSON-lines protocol on stdin/stdout (chapter ``conformance/harness``) and
is what the kit's own tests run to prove the subprocess path: every suite must give the same
verdicts through it as in-process. It is also a template: a harness for another language does
what :func:`dshkit.conformance.harness_server.serve` does, in a few dozen lines.
"""

from __future__ import annotations

import sys

from .harness_server import main as serve_implementation


def main() -> int:
    return serve_implementation(["reference"])


if __name__ == "__main__":
    sys.exit(main())
