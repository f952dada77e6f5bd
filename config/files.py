"""Reading a file the commands were given, without reading more than its limit allows."""

from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO


class FileTooLarge(ValueError):
    """The file is over its limit; the message names the limit and what sets it."""


def read_capped(source: str, limit: int, limit_name: str, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of file ``source`` (``-`` is standard input), at most ``limit`` of them.

    A regular file over the limit is refused from its size before any of it is read; anything
    else (a pipe, standard input, a file that grew) is read up to one byte past the limit, so
    memory never holds more than ``limit + 1`` bytes. Raises ``FileTooLarge`` naming the limit
    and ``limit_name`` (the setting or constant that chose it), and ``OSError`` when the file
    cannot be read.
    """
    if source == "-":
        data = (stdin or sys.stdin.buffer).read(limit + 1)
    else:
        with open(source, "rb") as handle:
            status = os.fstat(handle.fileno())
            if stat.S_ISREG(status.st_mode) and status.st_size > limit:
                raise FileTooLarge(
                    f"{source} is {status.st_size:,} bytes; the limit is {limit:,} bytes ({limit_name})"
                )
            data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(f"{source} is larger than {limit:,} bytes, the limit ({limit_name})")
    return data
