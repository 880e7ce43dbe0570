from django.conf import settings
from django.contrib import admin
from django.contrib.auth import urls as auth_urls
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import LoginView
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views.generic import RedirectView

from accounting.api.metrics import metrics
from fairshare_site import health_views
from trees.views.tokens import api_tokens_page

# Password reset sends mail: offered (its link and its pages) only when a mail server is set.
PASSWORD_RESET_VIEWS = {
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}
account_urls = [
    path("tokens/", api_tokens_page, name="api-tokens"),
    path(
        "login/",
        LoginView.as_view(extra_context={"password_reset": settings.PASSWORD_RESET}),
        name="login",
    ),
    *(
        pattern
        for pattern in auth_urls.urlpatterns
        if getattr(pattern, "name", None) != "login"
        and (settings.PASSWORD_RESET or getattr(pattern, "name", None) not in PASSWORD_RESET_VIEWS)
    ),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for it wherever no page names an icon (a JSON answer opened directly).
    path(
        "favicon.ico",
        login_not_required(
            RedirectView.as_view(url=lazy(static, str)("favicon.svg"), permanent=True)
        ),
        name="favicon",
    ),
    path("accounts/", include(account_urls)),
    path("api/", include("trees.api.urls")),
    path("api/", include("accounting.api.urls")),
    path("metrics", metrics, name="metrics"),
    # For a site's monitoring (docs/deploy.md); /healthz itself is trees'.
    path("healthz/db", health_views.database, name="health-db"),
    path("healthz/broker", health_views.broker, name="health-broker"),
    path("healthz/worker", health_views.worker, name="health-worker"),
    path("healthz/beat", health_views.beat, name="health-beat"),
    path("", include("trees.urls")),
    path("", include("accounting.urls")),
]

handler400 = "fairshare_site.errors.bad_request"
handler403 = "fairshare_site.errors.permission_denied"
handler404 = "fairshare_site.errors.page_not_found"
handler500 = "fairshare_site.errors.server_error"
