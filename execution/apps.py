from django.apps import AppConfig


class ExecutionConfig(AppConfig):
    name = "execution"
    verbose_name = "Test runs"

    def ready(self) -> None:
        # The graph store shows each version's suite results and gates exports on them, without
        # importing this app: it asks the provider registered here.
        from execution.suites.selectors import SuiteTestState
        from graphs import suitestate

        suitestate.register(SuiteTestState())

        # Every process that sends a run (the web process, commands, the worker) finds the run
        # task registered by name (execution.services.dispatch.run_task): Celery's autodiscovery
        # imports task modules only in the worker.
        import execution.tasks  # noqa: F401
