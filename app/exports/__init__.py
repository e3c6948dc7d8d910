"""Exports: CSV, Markdown, summary.json, report.html (streamed)."""
