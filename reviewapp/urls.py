from django.contrib import admin
from django.urls import path

from reviewapp import views
from reviewapp.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("answers/<int:answer_id>/", views.answer_detail, name="answer_detail"),
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
]
