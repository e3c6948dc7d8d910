"""Datasets: import and export tasks in every seed format; the CLI's run config.

Formats: `yaml` (a file or a folder of *.yml/*.yaml), `jsonl` (strict),
`csv` and `runner-jsonl`, `json` (ours, with collections).
  importer.import_tasks(path_or_bytes, fmt=None, filename=None, collection=None,
                        on_duplicate="reject"|"skip"|"update") -> ImportResult
  importer.check(...) -> CheckedDataset       validate only, nothing saved
  exporter.export_tasks(fmt, collection=None) -> iterator of str; exporter.export_text(...)
  run_config.load(path) -> RunPlan            strict run config, nothing saved
  run_plan.apply(plan) -> Run; run_plan.describe(plan) -> [str] (the dry run)
"""
