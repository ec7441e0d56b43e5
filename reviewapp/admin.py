from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group, User

from reviewapp.access import ROLES
from reviewapp.models import (
    Answer,
    ApiClient,
    AuditEvent,
    ExampleSet,
    JudgeRun,
    Policy,
    ReviewPass,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WorkedExample,
    WorkerHeartbeat,
)
from reviewapp.audit import audit_record
from reviewapp.api.clients import api_client_revoke
from reviewapp.accounts.users import role_names, user_roles_changed


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    list_display = ["name", "token_prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["token_prefix", "created_at", "last_used_at", "revoked_at"]
    exclude = ["token_hash"]
    actions = ["revoke_tokens"]

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        token = ApiClient.new_token()  # shown once, here; only its hash is kept
        obj.token_hash, obj.token_prefix = (
            ApiClient.hash_token(token),
            token[: len(ApiClient.TOKEN_PREFIX) + 4],
        )
        super().save_model(request, obj, form, change)
        audit_record(
            actor=request.user,
            actor_label=request.user.get_username(),
            action="api_client.created",
            obj=obj,
            after={"name": obj.name},
        )
        messages.warning(
            request, f"Token for {obj.name} (copy it now, it is not shown again): {token}"
        )

    @admin.action(description="Revoke the selected clients' tokens")
    def revoke_tokens(self, request, queryset):
        for client in queryset.filter(revoked_at__isnull=True):
            api_client_revoke(
                client=client, actor=request.user, actor_label=request.user.get_username()
            )


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "client",
        "external_id",
        "status",
        "verdict",
        "grounding_score",
        "review_status",
        "created_at",
    ]
    list_filter = ["status", "verdict", "review_status"]
    search_fields = ["external_id", "question"]
    readonly_fields = [f.name for f in Answer._meta.fields]

    def has_delete_permission(self, request, obj=None):
        # An answer's reviews are append-only history (a database trigger refuses the cascade).
        return False


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "answer",
        "config_key",
        "status",
        "is_current",
        "latency_ms",
        "attempts",
        "started_at",
    ]
    list_filter = ["status", "backend", "profile", "example_set"]
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
    list_display = [
        "version",
        "score_threshold",
        "audit_sample_rate",
        "created_by",
        "created_at",
        "note",
    ]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor_label", "action", "object_type", "object_id"]
    list_filter = ["action", "object_type"]


class WorkedExampleInline(admin.TabularInline):
    model = WorkedExample
    fields = [
        "position",
        "claim_text",
        "passage_pid",
        "passage_excerpt",
        "judge_label",
        "human_label",
        "reason",
        "source_claim",
    ]
    readonly_fields = fields
    can_delete = False
    extra = 0


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    can_delete = False
    readonly_fields = ["number", "started_at", "finished_at", "http_status", "latency_ms", "error"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ReviewPass)
class ReviewPassAdmin(ReadOnlyAdmin):
    list_display = [
        "answer",
        "reviewer",
        "status",
        "lease_expires_at",
        "assigned_by",
        "started_at",
        "finished_at",
    ]
    list_filter = ["status"]


@admin.register(ExampleSet)
class ExampleSetAdmin(ReadOnlyAdmin):
    """Made on /examples/; frozen once made."""

    list_display = ["__str__", "created_by", "created_at", "note"]
    list_filter = ["profile"]
    inlines = [WorkedExampleInline]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ReadOnlyAdmin):
    """Clients manage their endpoints through the API; /webhooks/ is the page for following them."""

    list_display = ["client", "url", "active", "created_at", "removed_at"]
    exclude = ["secret", "previous_secret"]  # signing keys are not for display


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["id", "event", "answer", "endpoint", "status", "attempts", "created_at"]
    list_filter = ["status", "event"]
    search_fields = ["event_id"]
    inlines = [WebhookAttemptInline]


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ReadOnlyAdmin):
    """Each worker's last consumed canary (see /health/); a killed worker's row can be deleted
    here."""

    list_display = ["hostname", "last_consumed_at", "last_sent_at", "consumed", "started_at"]

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


admin.site.unregister(User)


@admin.register(User)
class RoleUserAdmin(UserAdmin):
    """ClaimDesk admins manage reviewers and admins, nothing above them: a superuser is invisible to
    them (so neither edited, deleted nor given a new password), and they set no superuser flag and
    no permission, only a role (group). Superusers get Django's full user admin."""

    role_fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name", "email")}),
        ("Role", {"fields": ("is_active", "groups")}),
    )

    def get_queryset(self, request):
        users = super().get_queryset(request)
        return users if request.user.is_superuser else users.filter(is_superuser=False)

    def get_fieldsets(self, request, obj=None):
        if request.user.is_superuser or obj is None:
            return super().get_fieldsets(request, obj)
        return self.role_fieldsets

    def has_change_permission(self, request, obj=None):
        # Also guards the password form, which asks this of its user.
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = Group.objects.filter(name__in=ROLES)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        before = role_names(form.instance) if change else []
        super().save_related(request, form, formsets, change)
        user_roles_changed(user=form.instance, before=before, actor=request.user,
                           actor_label=request.user.get_username())
