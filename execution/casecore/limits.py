"""How much work judging a case may take: the bounds on ``matches`` regexes and on time.

RE2 matches in time linear in the text, but the factor is the compiled program's size: a valid
3.5 KB pattern of counted alternations compiles to ~50,000 instructions, overflows RE2's DFA
cache and falls back to its NFA, ~7 s per search of a 16 KiB string. So a regex is refused when
its program is larger than ``regex_program`` (when a case is read: at save, at import, at load),
a value is matched only when its text is at most ``regex_input`` bytes, and the expectations of
one case (and of one suite run, on the workers) get a budget of CPU seconds, after which the
rest are not judged and the case is an ``error`` saying which bound it hit.

The names in the messages are the Django settings that set these bounds (the ``testgraph``
command reads them too); this module itself reads no settings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CASE_BUDGET_SETTING",
    "DEFAULT_LIMITS",
    "SUITE_BUDGET_SETTING",
    "Budget",
    "BudgetExceeded",
    "Limits",
    "case_budget",
]

# The settings each budget's seconds come from, named by the message of a case that spent it.
CASE_BUDGET_SETTING: Final = "GRAPH_TEST_CASE_JUDGE_SECONDS"
SUITE_BUDGET_SETTING: Final = "GRAPH_TEST_SUITE_JUDGE_SECONDS"


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds; the defaults are the settings' defaults (config/settings.py says why)."""

    # Instructions of a compiled ``matches`` regex (RE2's ``programsize``). Hand-written patterns
    # stay far below (a UUID: 70, an ISO timestamp: 39); 2,000 keeps a 64 KiB search in ~30 ms.
    regex_program: int = 2000
    # Bytes of text one ``matches`` searches (a string value's UTF-8, else its compact JSON).
    regex_input: int = 64 * 1024
    # CPU seconds to judge one case's expectations.
    case_seconds: float = 5.0
    # CPU seconds to judge every case of one suite run (on the workers, summed over the cases).
    suite_seconds: float = 300.0


DEFAULT_LIMITS: Final = Limits()


class BudgetExceeded(Exception):
    """Raised between two evaluations once the budget is spent; ``reason`` names the bound."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class Budget:
    """CPU time of the judging thread (``time.thread_time``: the thread's own work, whatever else
    the machine runs), counted from the first :meth:`check`, so a budget made before the run it
    judges (an in-process suite awaits the engine in between) counts only the judging.

    ``seconds`` is what may be used; ``setting`` names the bound it comes from, for the message.
    """

    def __init__(self, seconds: float, setting: str) -> None:
        self.seconds = seconds
        self.setting = setting
        self._start: float | None = None

    @property
    def used(self) -> float:
        return 0.0 if self._start is None else time.thread_time() - self._start

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` when the budget is spent (the first call starts it)."""
        if self._start is None:
            self._start = time.thread_time()
        if self.used > self.seconds:
            raise BudgetExceeded(
                f"judging took more than the {self.seconds:g} CPU seconds allowed ({self.setting}); "
                "the remaining expectations were not judged"
            )


def case_budget(limits: Limits, suite_spent: float) -> Budget | str:
    """The budget of the next case of a suite run that has spent ``suite_spent`` CPU seconds
    judging: the case's own, or what the suite run has left when that is less; or, when the
    suite run has nothing left, why the case is not judged."""
    remaining = limits.suite_seconds - suite_spent
    if remaining <= 0:
        return (
            f"the suite run has spent the {limits.suite_seconds:g} CPU seconds of judging it may take "
            f"({SUITE_BUDGET_SETTING}); this case was not judged"
        )
    if remaining < limits.case_seconds:
        return Budget(remaining, SUITE_BUDGET_SETTING)
    return Budget(limits.case_seconds, CASE_BUDGET_SETTING)
