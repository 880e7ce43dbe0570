# The real services and workers of test_celery_cycles, for every integration test.
from tests.integration.test_celery_cycles import services, worker  # noqa: F401
