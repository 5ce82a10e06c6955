# When manage.py mcpforms_cleanup last ran: while that is recent, requests leave expired rows to it.

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("mcpforms", "0010_era2025_names")]

    operations = [
        migrations.CreateModel(
            name="CleanupRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={"verbose_name": "cleanup run"},
        ),
    ]
