"""The bench's own app, in ``bench.http_settings`` and the bare view's and django-mcpz's variants: counts lock
wait on every database connection (``bench/lock_wait.py``), and, where mcpforms is installed, its
autodiscovery imports ``bench.mcp_tools``."""

from django.apps import AppConfig


class BenchConfig(AppConfig):
    name = "bench"
    label = "bench"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from bench import lock_wait

        connection_created.connect(lock_wait.install, dispatch_uid="bench-lock-wait")
