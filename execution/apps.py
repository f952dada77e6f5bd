from django.apps import AppConfig


class ExecutionConfig(AppConfig):
    name = "execution"
    verbose_name = "Test runs"

    def ready(self) -> None:
        # The graph store shows each version's suite results and gates exports on them, without
        # importing this app: it asks the provider registered here.
        from execution.suites.selectors import SuiteTestState
        from graphs import teststate

        teststate.register(SuiteTestState())
