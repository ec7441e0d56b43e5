from django.apps import AppConfig


class ReviewAppConfig(AppConfig):
    name = "reviewapp"
    verbose_name = "ClaimDesk"
    default_auto_field = "django.db.models.BigAutoField"
