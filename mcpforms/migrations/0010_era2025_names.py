# The 2025-era tables are named for the protocol era they serve, and every model's creation time is
# ``created``.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("mcpforms", "0009_legacy_budgets")]

    operations = [
        migrations.RenameModel("LegacySession", "Era2025Session"),
        migrations.RenameModel("LegacyCall", "Era2025Call"),
        migrations.RenameField("AccessToken", "created_at", "created"),
        migrations.AlterModelOptions(
            name="accesstoken",
            options={
                "ordering": ["-created"],
                "permissions": [("issue_token_for_others", "Can issue and manage access tokens of other users")],
                "verbose_name": "access token",
            },
        ),
    ]
