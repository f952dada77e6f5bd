"""Text a database can store: no NUL character, no lone surrogate.

PostgreSQL's ``text`` cannot hold U+0000 and its ``jsonb`` refuses the ``\\u0000`` escape; a lone
surrogate (U+D800 to U+DFFF, which JSON's ``\\ud800`` escape and YAML's ``"\\ud800"`` can spell) is
not a Unicode character at all and cannot be encoded as UTF-8, so it fails wherever the text is
written, to the database or into a response. Every way text enters (JSON bodies, YAML and JSON
files) refuses both before anything is stored, saying where.
"""

from __future__ import annotations

import re
from typing import Final

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """What in ``text`` cannot be stored (a phrase for a message), or ``None`` when it all can."""
    if "\x00" in text:
        return "a NUL character (U+0000), which text fields cannot hold"
    if not text.isascii():  # isascii is O(1) on CPython strings: the common case costs nothing
        found = _SURROGATE.search(text)
        if found is not None:
            return f"a lone surrogate (U+{ord(found.group()):04X}), which is not a Unicode character"
    return None
