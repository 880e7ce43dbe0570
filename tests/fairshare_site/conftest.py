"""The site-wide tests use the page tests' demo site and logins."""

from tests.trees.views.conftest import sample, sample_site

__all__ = ["sample", "sample_site"]
