from django.contrib import admin

from deploys.models import Deployment, DeployTarget


@admin.register(DeployTarget)
class DeployTargetAdmin(admin.ModelAdmin):
    list_display = ("name", "url", "branch", "mode", "owner", "visibility")
    exclude = ("secret",)  # write-only: set through the API or the page


@admin.register(Deployment)
class DeploymentAdmin(admin.ModelAdmin):
    list_display = ("graph", "version", "target_name", "status", "commit", "created_by", "created_at")
    list_filter = ("status",)
    exclude = ("content", "drift_content")
