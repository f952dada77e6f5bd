"""Every write of the execution app, one family per module: :mod:`.environments`, :mod:`.runs`
(starting and cancelling), :mod:`.run_request` (a run's body and headers), :mod:`.worker` (running
one), :mod:`.reaper` (runs whose worker died), :mod:`.endings` (what every ending writes).

A run moves ``queued -> running -> succeeded | failed | cancelled`` only through conditional updates
(``filter(pk=…, status=…).update(…)``), so the web process, any number of workers and the reaper may
act on the same run at once: exactly one of them wins each transition, and the others see that
they lost and do nothing. Every transition writes a ``RunEvent`` in the same transaction.
"""
