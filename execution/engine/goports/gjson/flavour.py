"""Which gjson the current evaluation follows: v1.18.0 (and v1.17, the same for conditions) or
v1.14.4, the one KServe v0.11 pins.

v1.14.4 differs in three places a condition can reach: there is no ``@dig`` modifier (``@dig:…``
is then a plain key), a ``~`` query operand turns the value into Go's ``Result.Bool()`` whatever
follows the ``~`` (``~null``, ``~*`` and ``~false`` are compared as the words ``null``, ``*`` and
``false``), and a modifier's plain argument ends at the first ``|``, brackets and strings or not.

The choice is a context variable, so concurrent runs of different releases on one event loop do
not see each other's: :func:`gjson_context` gives a context to run a task in.
"""

from __future__ import annotations

import contextvars
from typing import Final

__all__ = ["gjson_context", "is_legacy"]

_LEGACY: Final = contextvars.ContextVar("gjson_v1_14", default=False)


def is_legacy() -> bool:
    """Whether the current evaluation follows gjson v1.14.4."""
    return _LEGACY.get()


def gjson_context(*, legacy: bool) -> contextvars.Context:
    """A copy of the current context in which evaluations follow v1.14.4 (``legacy``) or v1.18.0."""
    context = contextvars.copy_context()
    context.run(_LEGACY.set, legacy)
    return context
