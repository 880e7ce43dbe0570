from django.apps import AppConfig


class AccountingConfig(AppConfig):
    name = "accounting"
    verbose_name = "Accounting and usage"

    def ready(self) -> None:
        from celery.signals import task_failure

        from accounting.signals import task_failure_record

        # Strong, and once: the receiver is a module function, connected again on a reload.
        task_failure.connect(task_failure_record, weak=False, dispatch_uid="task_failure_record")
