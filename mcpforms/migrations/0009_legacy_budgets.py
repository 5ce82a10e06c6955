from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("mcpforms", "0008_url_elicitation_server"),
    ]

    operations = [
        migrations.AddField(
            model_name="legacysession",
            name="address",
            field=models.CharField(blank=True, max_length=64),
        ),
        # A session opened before sessions were bound to their server belongs to none: it answers 404
        # everywhere, and its client opens a new one (2025-11-25, Session Management).
        migrations.AddField(
            model_name="legacysession",
            name="server",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddIndex(
            model_name="legacycall",
            index=models.Index(fields=["session", "created"], name="mcpforms_call_session"),
        ),
        migrations.AddIndex(
            model_name="legacysession",
            index=models.Index(fields=["principal", "created"], name="mcpforms_session_principal"),
        ),
        migrations.AddIndex(
            model_name="legacysession",
            index=models.Index(fields=["address", "created"], name="mcpforms_session_address"),
        ),
    ]
