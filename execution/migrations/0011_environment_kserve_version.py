from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("execution", "0010_load_tests"),
    ]

    operations = [
        migrations.AddField(
            model_name="environment",
            name="kserve_version",
            field=models.CharField(
                choices=[
                    ("master", "master (also v0.19.0, v0.20.0)"),
                    ("v0.16.0", "v0.16.0 (also v0.17.0, v0.17.1, v0.18.0, v0.18.1)"),
                    ("v0.15.2", "v0.15.2 (also v0.15.1)"),
                    ("v0.14.1", "v0.14.1 (also v0.14.0)"),
                    ("v0.13.1", "v0.13.1 (also v0.13.0)"),
                    ("v0.12.1", "v0.12.1 (also v0.12.0)"),
                    ("v0.11.2", "v0.11.2 (also v0.11.1)"),
                ],
                default="master",
                help_text="The KServe release whose router runs reproduce (and validation checks against)",
                max_length=16,
            ),
        ),
    ]
