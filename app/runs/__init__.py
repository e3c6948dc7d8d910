"""A run as data: start, pause, stop, resume, its spec rules, state, queries and views."""
