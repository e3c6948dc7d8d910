"""Datasets: import and export tasks in every seed format; the CLI's run config.

Formats: `yaml` (seed 001, a file or a folder of *.yml/*.yaml), `jsonl` (seed 004, strict),
`csv` and `runner-jsonl` (seed 003), `json` (ours, with collections).
  importer.import_tasks(path_or_bytes, fmt=None, filename=None, collection=None,
                        on_duplicate="reject"|"skip"|"update") -> ImportResult
  importer.check(...) -> CheckedDataset       validate only, nothing saved
  exporter.export_tasks(fmt, collection=None) -> iterator of str; exporter.export_text(...)
  run_config.load(path) -> RunPlan            strict run config (seed 004), nothing saved
  run_plan.apply(plan) -> Run; run_plan.describe(plan) -> [str] (the dry run)
"""
