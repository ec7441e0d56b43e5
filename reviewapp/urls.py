from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

from reviewapp import views
from reviewapp.accounts import sso
from reviewapp.api.routes import api
from reviewapp.labels import example_views as example_views
from reviewapp.labels import views as label_views
from reviewapp.mcp import http as mcp_http
from reviewapp.pairwise import views as pairwise_views
from reviewapp.policy import views as policy_views
from reviewapp.quality import views as quality_views
from reviewapp.review import views as review_views
from reviewapp.webhooks import views as webhook_views

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="queue"), name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("health/", views.health, name="health"),
    path("metrics", views.metrics, name="metrics"),
    path("queue/", review_views.queue, name="queue"),
    path("queue/next", review_views.queue_next, name="queue_next"),
    path("answers/", review_views.answers, name="answers"),
    path(
        "answers/<int:answer_id>/",
        RedirectView.as_view(pattern_name="review"),
        name="answer_detail",
    ),
    path("review/<int:answer_id>/", review_views.review, name="review"),
    path("review/<int:answer_id>/runs/<int:run_id>/", review_views.run_compare, name="run_compare"),
    path("review/<int:answer_id>/claims/<int:claim_id>/decide", review_views.decide, name="decide"),
    path(
        "review/<int:answer_id>/claims/<int:claim_id>/draft",
        review_views.note_draft,
        name="note_draft",
    ),
    path(
        "review/<int:answer_id>/claims/<int:claim_id>/note",
        review_views.note_edit,
        name="note_edit",
    ),
    path(
        "review/<int:answer_id>/claims/<int:claim_id>/evidence",
        review_views.evidence_mark,
        name="evidence_mark",
    ),
    path("review/<int:answer_id>/undo", review_views.undo, name="undo"),
    path("review/<int:answer_id>/reopen", review_views.reopen, name="reopen"),
    path("review/<int:answer_id>/add-claim", review_views.add_claim, name="add_claim"),
    path("review/<int:answer_id>/finish", review_views.finish, name="finish"),
    path("review/<int:answer_id>/take", review_views.lease_take, name="lease_take"),
    path("review/<int:answer_id>/skip", review_views.skip, name="skip"),
    path("review/<int:answer_id>/lease", review_views.lease_renew, name="lease_renew"),
    path("review/<int:answer_id>/release", review_views.lease_release, name="lease_release"),
    path("review/<int:answer_id>/comments", review_views.answer_comments, name="answer_comments"),
    path("review/<int:answer_id>/comments/add", review_views.comment_add, name="comment_add"),
    path("adjudication/", review_views.adjudication, name="adjudication"),
    path("assign", review_views.assign, name="assign"),
    path("reviewers/", review_views.reviewers, name="reviewers"),
    path("reviewers/pauses/<int:pause_id>/", quality_views.second_look, name="second_look"),
    path(
        "reviewers/pauses/<int:pause_id>/resume",
        quality_views.reviewer_resume,
        name="reviewer_resume",
    ),
    path("review/<int:answer_id>/gold", quality_views.gold_mark, name="gold_mark"),
    path("exports/gold.jsonl", quality_views.gold_export, name="gold_export"),
    path("policy/", policy_views.policy, name="policy"),
    path("policy/preview", policy_views.policy_preview, name="policy_preview"),
    path("policy/<int:version>/rollback", policy_views.policy_rollback, name="policy_rollback"),
    path("policy/guidelines", policy_views.policy_guidelines, name="policy_guidelines"),
    path("policy/reroute", policy_views.policy_reroute, name="policy_reroute"),
    path("policy/rejudge", policy_views.policy_rejudge, name="policy_rejudge"),
    path("jobs/<int:job_id>/", policy_views.job_progress, name="job_progress"),
    path("exports/", label_views.exports, name="exports"),
    path("exports/download", label_views.export_download, name="export_download"),
    path("exports/manifest", label_views.export_manifest, name="export_manifest"),
    path("calibration/", label_views.calibration, name="calibration"),
    path("examples/", example_views.examples, name="examples"),
    path("examples/<int:set_id>/", example_views.example_set, name="example_set"),
    path("examples/<int:set_id>/set.json", example_views.example_set_json, name="example_set_json"),
    path("webhooks/", webhook_views.webhooks, name="webhooks"),
    path(
        "webhooks/deliveries/<int:delivery_id>/retry",
        webhook_views.webhook_retry,
        name="webhook_retry",
    ),
    path("api/v1/", api.urls),
    path("mcp", mcp_http.mcp_endpoint, name="mcp"),
    path("compare/", pairwise_views.comparisons, name="comparisons"),
    path("compare/<int:comparison_id>/", pairwise_views.compare, name="compare"),
    path(
        "compare/<int:comparison_id>/items/<int:item_id>/choose",
        pairwise_views.choose,
        name="compare_choose",
    ),
    path(
        "compare/<int:comparison_id>/results",
        pairwise_views.comparison_results,
        name="comparison_results",
    ),
    path(
        "compare/<int:comparison_id>/export.csv",
        pairwise_views.comparison_export,
        name="comparison_export",
    ),
    path("admin/", admin.site.urls),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path("accounts/sso/start", sso.sso_start, name="sso_start"),
    path("accounts/sso/callback", sso.sso_callback, name="sso_callback"),
    path("accounts/sso/denied", sso.sso_denied, name="sso_denied"),
]

# The database down is a 503 page with Retry-After, not "Server Error (500)" (reviewapp/views.py).
handler500 = "reviewapp.views.server_error"
