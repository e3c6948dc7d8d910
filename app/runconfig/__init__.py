"""Run configs: a YAML or JSON file (or an apocbench-style one) checked into a run plan, and the
plan applied as providers, prices, collections and a run."""
