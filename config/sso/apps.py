from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "config.sso"
    label = "studio_sso"
    verbose_name = "Single sign-on"

    def ready(self) -> None:
        from django.conf import settings

        from config.sso import audit  # noqa: F401  (connects the sign-in signal receivers)
        from config.sso.proxy import parse_networks

        # A mistyped CIDR stops the process at start (ImproperlyConfigured), not its first request.
        parse_networks(tuple(settings.STUDIO_PROXY_TRUSTED_NETWORKS))
