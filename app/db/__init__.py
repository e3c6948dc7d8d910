"""The database: connection, URLs, models, schema migrations, copying one into another."""
