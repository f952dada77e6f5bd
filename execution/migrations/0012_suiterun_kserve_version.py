from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("execution", "0011_environment_kserve_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="suiterun",
            name="kserve_version",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The KServe release every case ran as, instead of its environment's; empty: the environment's",
                max_length=16,
            ),
        ),
    ]
