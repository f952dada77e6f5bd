from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('execution', '0008_suite_judge_seconds_case_revision'),
    ]

    operations = [
        migrations.AddField(
            model_name='environment',
            name='trace_propagation',
            field=models.BooleanField(default=True, help_text="Send a W3C traceparent to every step, so the model servers' spans nest under the run's"),
        ),
    ]
