"""Reading a run: averages with CIs, the detailed table, statistics, compare, charts."""
