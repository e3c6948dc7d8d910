"""The schema a database holds, read back from its catalog: tables, columns, foreign keys,
indexes, triggers, views and statistics, in a stable order, as one text per dialect.

`describe(db)` is what tests compare (a fresh database against an upgraded one); `render(db)`
writes it as SQL-like text, and docs/schema.sql is `document(sqlite_text, postgres_text)`
made from two fresh databases (tests/schema_doc.py builds them: `python -m tests.schema_doc`).
"""

import re

# SQLite keeps the text of each CREATE as written; whitespace and quoting are not the schema.
_SPACES = re.compile(r"\s+")


def _squeeze(sql):
    return _SPACES.sub(" ", sql).strip()


def _unquote(sql):
    return _squeeze(sql).replace('"', "")


def _where(sql):
    """The WHERE of a partial index's CREATE text, or None."""
    match = re.search(r"\bWHERE\b(.*)$", _unquote(sql or ""), re.IGNORECASE)
    return match.group(1).strip() if match else None


def _sqlite(db):
    tables = {}
    names = [
        row[0]
        for row in db.execute_sql(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    for table in names:
        columns = [
            {
                "name": name,
                "type": kind.upper(),
                "null": not notnull and not pk,
                "default": default,
                "primary_key": bool(pk),
            }
            for _, name, kind, notnull, default, pk in db.execute_sql(
                f'PRAGMA table_info("{table}")'
            )
        ]
        references = sorted(
            (source, target, to, on_delete)
            for _, _, target, source, to, _, on_delete, _ in db.execute_sql(
                f'PRAGMA foreign_key_list("{table}")'
            )
        )
        tables[table] = {"columns": columns, "references": references}
    indexes = {}
    for name, table, sql in db.execute_sql(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
    ):
        unique = next(
            bool(row[2])
            for row in db.execute_sql(f'PRAGMA index_list("{table}")')
            if row[1] == name
        )
        columns = [row[2] for row in db.execute_sql(f'PRAGMA index_info("{name}")')]
        # An index SQLite makes for a UNIQUE constraint has no text: its table's CREATE says it.
        indexes[name] = {
            "table": table,
            "unique": unique,
            "columns": columns,
            "where": _where(sql),
            "implicit": sql is None,
        }
    triggers = {
        name: {"table": table, "sql": _unquote(sql)}
        for name, table, sql in db.execute_sql(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
        )
    }
    views = {
        name: _unquote(sql)
        for name, sql in db.execute_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name"
        )
    }
    return {
        "tables": tables,
        "indexes": indexes,
        "triggers": triggers,
        "functions": {},
        "views": views,
        "statistics": {},
    }


def _postgres_type(data_type, length):
    kind = data_type.upper()
    return f"{kind}({length})" if length else kind


def _postgres(db):
    tables = {}
    names = [
        row[0]
        for row in db.execute_sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_type = 'BASE TABLE' ORDER BY table_name"
        )
    ]
    for table in names:
        columns = [
            {
                "name": name,
                "type": _postgres_type(data_type, length),
                "null": nullable == "YES",
                "default": default,
                "primary_key": False,
            }
            for name, data_type, length, nullable, default in db.execute_sql(
                "SELECT column_name, data_type, character_maximum_length, is_nullable, "
                "column_default FROM information_schema.columns "
                "WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
        ]
        keys = {
            row[0]
            for row in db.execute_sql(
                "SELECT a.attname FROM pg_constraint c JOIN pg_attribute a "
                "ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
                "WHERE c.contype = 'p' AND c.conrelid = %s::regclass",
                (f'"{table}"',),
            )
        }
        for column in columns:
            column["primary_key"] = column["name"] in keys
        # Compared by what they say, not by their names (PostgreSQL or Peewee named them).
        references = sorted(
            row[0]
            for row in db.execute_sql(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE contype = 'f' AND conrelid = %s::regclass",
                (f'"{table}"',),
            )
        )
        tables[table] = {"columns": columns, "references": references}
    indexes = {
        name: {"table": table, "sql": _unquote(sql.replace("public.", ""))}
        for name, table, sql in db.execute_sql(
            "SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = 'public' "
            "ORDER BY indexname"
        )
    }
    triggers = {
        name: {"table": table, "sql": _unquote(sql.replace("public.", ""))}
        for name, table, sql in db.execute_sql(
            "SELECT t.tgname, c.relname, pg_get_triggerdef(t.oid) FROM pg_trigger t "
            "JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE NOT t.tgisinternal AND n.nspname = 'public' ORDER BY t.tgname"
        )
    }
    functions = {
        name: _squeeze(sql.replace("public.", ""))
        for name, sql in db.execute_sql(
            "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' "
            "ORDER BY p.proname"
        )
    }
    views = {
        name: _squeeze(sql)
        for name, sql in db.execute_sql(
            "SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' "
            "ORDER BY viewname"
        )
    }
    statistics = {
        name: _unquote(sql.replace("public.", ""))
        for name, sql in db.execute_sql(
            "SELECT stxname, pg_get_statisticsobjdef(oid) FROM pg_statistic_ext ORDER BY stxname"
        )
    }
    return {
        "tables": tables,
        "indexes": indexes,
        "triggers": triggers,
        "functions": functions,
        "views": views,
        "statistics": statistics,
    }


def describe(db):
    """The schema of `db` (an open Peewee database) as plain data, in a stable order."""
    return _postgres(db) if getattr(db, "is_postgres", False) else _sqlite(db)


def _column_line(column):
    parts = [column["name"], column["type"] or "(no type)"]
    if column["primary_key"]:
        parts.append("PRIMARY KEY")
    elif not column["null"]:
        parts.append("NOT NULL")
    if column["default"] is not None:
        parts.append(f"DEFAULT {column['default']}")
    return " ".join(parts)


def _sqlite_index_line(name, index):
    unique = "UNIQUE " if index["unique"] else ""
    where = f" WHERE {index['where']}" if index["where"] else ""
    made = " -- made by its table's UNIQUE" if index["implicit"] else ""
    return (
        f"CREATE {unique}INDEX {name} ON {index['table']} "
        f"({', '.join(index['columns'])}){where};{made}"
    )


def render(schema):
    """`describe`'s schema as SQL-like text: one CREATE per object, in describe's order."""
    lines = []
    for table, shape in schema["tables"].items():
        body = [_column_line(c) for c in shape["columns"]]
        for reference in shape["references"]:
            if isinstance(reference, str):
                body.append(reference)
            else:
                source, target, to, on_delete = reference
                body.append(
                    f"FOREIGN KEY ({source}) REFERENCES {target}({to}) ON DELETE {on_delete}"
                )
        lines.append(f"CREATE TABLE {table} (\n    " + ",\n    ".join(body) + "\n);")
    lines.append("")
    for name, index in schema["indexes"].items():
        if "sql" in index:
            lines.append(index["sql"] + ";")
        else:
            lines.append(_sqlite_index_line(name, index))
    for kind in ("functions", "triggers", "views", "statistics"):
        if not schema[kind]:
            continue
        lines.append("")
        for name, sql in schema[kind].items():
            if kind == "triggers":
                sql = sql["sql"]
            elif kind == "views":
                sql = f"CREATE VIEW {name} AS {sql.rstrip(';')}"
            # A body's statements one a line.
            lines.append(_BODY_STATEMENT.sub(";\n    ", sql.rstrip(";")) + ";")
    return "\n".join(lines) + "\n"


# The end of a statement inside a trigger's or function's body.
_BODY_STATEMENT = re.compile(r";\s+(?!\$\$|$)")


HEADER = (
    "-- llmbench's database schema: what a fresh database holds after every migration.\n"
    "-- Generated, not edited: python -m tests.schema_doc > docs/schema.sql\n"
)


def document(sqlite_text, postgres_text):
    """docs/schema.sql: the SQLite section, then the PostgreSQL one."""
    return f"{HEADER}\n-- SQLite\n\n{sqlite_text}\n-- PostgreSQL\n\n{postgres_text}"
