# A wizard's page step keeps what the user submitted sealed for its flow (mcpforms.sealing), its files
# encrypted in a storage of their own: the rows kept in clear before go, with their files.

import django.utils.timezone
from django.core.files.storage import default_storage
from django.db import migrations, models


def delete_steps_kept_in_clear(apps, schema_editor):
    """Delete every page step kept before: its password in clear, its files in default_storage. A flow
    still under way asks the step again, on a new page."""
    step_model = apps.get_model("mcpforms", "WizardPageStep")
    page_model = apps.get_model("mcpforms", "UrlElicitation")
    paths = []
    for files in step_model.objects.using(schema_editor.connection.alias).values_list("files", flat=True):
        fields = files.values() if isinstance(files, dict) else ()
        paths += [kept["path"] for entries in fields for kept in entries if isinstance(kept.get("path"), str)]
    page_model.objects.using(schema_editor.connection.alias).filter(wizard_step__isnull=False).delete()
    for path in paths:
        default_storage.delete(path)


class Migration(migrations.Migration):
    dependencies = [
        ("mcpforms", "0015_ordered_json"),
    ]

    operations = [
        migrations.RunPython(delete_steps_kept_in_clear, migrations.RunPython.noop),
        migrations.RemoveField(model_name="wizardpagestep", name="data"),
        migrations.RemoveField(model_name="wizardpagestep", name="files"),
        migrations.AddField(
            model_name="wizardpagestep",
            name="public_key",
            field=models.BinaryField(default=b"", max_length=32),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="wizardpagestep",
            name="sealed",
            field=models.BinaryField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="wizardpagestep",
            name="paths",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="wizardpagestep",
            name="expires",
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
    ]
