# The saved case model is GraphCase (it was TestCase, a name test tooling reads as its own). The
# table follows the model (execution_testcase -> execution_graphcase); rows, keys and the
# constraint's name are kept, and the API's fields and URLs do not change.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('execution', '0013_loadtest_secret_header_names'),
    ]

    operations = [
        migrations.RenameModel(old_name='TestCase', new_name='GraphCase'),
    ]
