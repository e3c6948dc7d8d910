"""Exports of one run: CSV (average, detailed), Markdown, summary.json and report.html.

Every detailed export streams: rows come from one server-side cursor, so memory stays flat
whatever the run's size. Nothing here reads provider headers, so no secret can leak into a file.
"""
