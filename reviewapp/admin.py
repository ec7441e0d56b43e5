from django.contrib import admin

from reviewapp.models import Answer, ApiClient, AuditEvent, JudgeRun, Policy


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    list_display = ["name", "token_prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["token_hash", "token_prefix", "created_at", "last_used_at"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["id", "client", "external_id", "status", "verdict", "grounding_score", "review_status", "created_at"]
    list_filter = ["status", "verdict", "review_status"]
    search_fields = ["external_id", "question"]
    readonly_fields = [f.name for f in Answer._meta.fields]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["id", "answer", "config_key", "status", "is_current", "latency_ms", "attempts", "started_at"]
    list_filter = ["status", "backend", "profile"]
    readonly_fields = [f.name for f in JudgeRun._meta.fields]


class ReadOnlyAdmin(admin.ModelAdmin):
    """History is never edited, here or anywhere."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Policy)
class PolicyAdmin(ReadOnlyAdmin):
    list_display = ["version", "score_threshold", "audit_sample_rate", "created_by", "created_at", "note"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor_label", "action", "object_type", "object_id"]
    list_filter = ["action", "object_type"]
