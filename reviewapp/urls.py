from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

from reviewapp import sso, views, views_examples, views_labels, views_webhooks
from reviewapp.api import api

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="queue"), name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("health/", views.health, name="health"),
    path("metrics", views.metrics, name="metrics"),
    path("queue/", views.queue, name="queue"),
    path("queue/next", views.queue_next, name="queue_next"),
    path("answers/", views.answers, name="answers"),
    path("answers/<int:answer_id>/", RedirectView.as_view(pattern_name="review"), name="answer_detail"),
    path("review/<int:answer_id>/", views.review, name="review"),
    path("review/<int:answer_id>/claims/<int:claim_id>/decide", views.decide, name="decide"),
    path("review/<int:answer_id>/undo", views.undo, name="undo"),
    path("review/<int:answer_id>/add-claim", views.add_claim, name="add_claim"),
    path("review/<int:answer_id>/finish", views.finish, name="finish"),
    path("review/<int:answer_id>/take", views.lease_take, name="lease_take"),
    path("review/<int:answer_id>/skip", views.skip, name="skip"),
    path("review/<int:answer_id>/lease", views.lease_renew, name="lease_renew"),
    path("review/<int:answer_id>/release", views.lease_release, name="lease_release"),
    path("review/<int:answer_id>/comments", views.answer_comments, name="answer_comments"),
    path("review/<int:answer_id>/comments/add", views.comment_add, name="comment_add"),
    path("adjudication/", views.adjudication, name="adjudication"),
    path("assign", views.assign, name="assign"),
    path("reviewers/", views.reviewers, name="reviewers"),
    path("policy/", views.policy, name="policy"),
    path("policy/preview", views.policy_preview, name="policy_preview"),
    path("policy/<int:version>/rollback", views.policy_rollback, name="policy_rollback"),
    path("policy/reroute", views.policy_reroute, name="policy_reroute"),
    path("policy/rejudge", views.policy_rejudge, name="policy_rejudge"),
    path("jobs/<int:job_id>/", views.job_progress, name="job_progress"),
    path("exports/", views_labels.exports, name="exports"),
    path("exports/download", views_labels.export_download, name="export_download"),
    path("exports/manifest", views_labels.export_manifest, name="export_manifest"),
    path("calibration/", views_labels.calibration, name="calibration"),
    path("examples/", views_examples.examples, name="examples"),
    path("examples/<int:set_id>/", views_examples.example_set, name="example_set"),
    path("examples/<int:set_id>/set.json", views_examples.example_set_json, name="example_set_json"),


    path("webhooks/", views_webhooks.webhooks, name="webhooks"),
    path("webhooks/deliveries/<int:delivery_id>/retry", views_webhooks.webhook_retry, name="webhook_retry"),
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path("accounts/sso/start", sso.sso_start, name="sso_start"),
    path("accounts/sso/callback", sso.sso_callback, name="sso_callback"),
    path("accounts/sso/denied", sso.sso_denied, name="sso_denied"),
]
