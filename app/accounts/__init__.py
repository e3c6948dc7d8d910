"""Accounts, their roles, tokens for machines, login throttling and the audit log (issue 30).

Plain functions over the database: the web edge (web/access.py) asks them who a request is and
what its role allows, the CLI (`llmbench users|tokens`) manages them. No Flask here."""
