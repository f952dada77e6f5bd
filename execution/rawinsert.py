"""Inserting new rows of the hot write paths (a run's events and steps) with one ``INSERT`` of our
own instead of ``bulk_create``.

Storing a short run's events and steps is a few small inserts per run, each made inside the
database's single write turn (SQLite) that every worker thread waits for; ``bulk_create`` spent
most of their CPU on its own bookkeeping (per-row and per-field checks, reading the new ids back).
Here the values still go through each field's own ``pre_save`` and ``get_db_prep_save`` (so they
are stored exactly as Django would store them), but the rows' ids are not read back: callers of
:func:`insert_rows` find these rows by their natural keys, never by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from django import db
from django.db import models

M = TypeVar("M", bound=models.Model)

# The databases whose multi-row ``INSERT ... VALUES (...), (...)`` this module writes.
_VENDORS = ("sqlite", "postgresql")


def insert_rows(model: type[M], rows: Sequence[M]) -> None:
    """Insert ``rows`` (new instances of ``model``, in the caller's transaction). Their ids stay
    unset; elsewhere than SQLite and PostgreSQL this is ``bulk_create``."""
    if not rows:
        return
    connection = db.connection
    if connection.vendor not in _VENDORS:
        model._default_manager.bulk_create(rows)
        return
    meta = model._meta
    fields = [field for field in meta.concrete_fields if field is not meta.auto_field]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    size = max(1, connection.ops.bulk_batch_size(fields, rows))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            params = [
                field.get_db_prep_save(field.pre_save(row, True), connection)
                for row in chunk
                for field in fields
            ]
            cursor.execute(
                f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES {', '.join([one] * len(chunk))}",  # noqa: S608
                params,
            )
    for row in rows:
        row._state.adding = False
        row._state.db = connection.alias
