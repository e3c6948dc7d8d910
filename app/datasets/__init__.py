"""Datasets: import and export tasks in every task file format.

Formats: `yaml` (a file or a folder of *.yml/*.yaml), `jsonl` (strict),
`csv` and `runner-jsonl`, `json` (ours, with collections).
  importer.import_tasks(path_or_bytes, fmt=None, filename=None, collection=None,
                        on_duplicate="reject"|"skip"|"update") -> ImportResult
  importer.check(...) -> CheckedDataset       validate only, nothing saved
  exporter.export_tasks(fmt, collection=None) -> iterator of str; exporter.export_text(...)
"""
