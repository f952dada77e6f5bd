from django.urls import path

from execution import apis

urlpatterns = [
    path("conditions/evaluate/", apis.ConditionEvaluateApi.as_view(), name="conditions-evaluate"),
]
