"""Files we write: owner-only (0600) files (private.py), CSV cells no spreadsheet runs
(csvcells.py)."""
