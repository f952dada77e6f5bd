from django.apps import AppConfig


class DeploysConfig(AppConfig):
    name = "deploys"
    verbose_name = "Deploys through Git"
