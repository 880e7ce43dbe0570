from django.apps import AppConfig


class AccountingConfig(AppConfig):
    name = "accounting"
    verbose_name = "Accounting and usage"

    def ready(self) -> None:
        from celery.signals import task_failure

        # The services send tasks by name (app.tasks[...]): register them in every process,
        # the web's too, where Celery's autodiscovery waits for a worker to start.
        import accounting.tasks  # noqa: F401
        from accounting.signals import task_failure_record

        # Strong, and once: the receiver is a module function, connected again on a reload.
        task_failure.connect(task_failure_record, weak=False, dispatch_uid="task_failure_record")
