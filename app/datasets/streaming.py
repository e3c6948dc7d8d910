"""Reading one big dataset file as a stream: line formats only (JSONL, LLM Runner CSV and
JSONL), line by line, so an import's memory does not grow with the file (importer.py reads it
twice: once to check everything, once to save)."""

import io
from pathlib import Path

from . import jsonl_tasks
from . import runner_tasks
from .common import Problems
from .validate import finish

LINE_PARSERS = {
    "jsonl": jsonl_tasks.iter_tasks,
    "runner-jsonl": runner_tasks.iter_jsonl,
    "csv": runner_tasks.iter_csv,
}
PEEK_BYTES = 65536  # enough of the head to tell the format (importer.sniff)


class CappedProblems(Problems):
    """Problems that keep the first `limit` entries and count the rest (a file of a million
    bad lines must not hold a million messages)."""

    def __init__(self, file, limit):
        super().__init__(file)
        self.limit, self.more = limit, 0

    def add(self, field_name, message, line=None, file=None):
        if len(self.entries) < self.limit:
            super().add(field_name, message, line, file)
        else:
            self.more += 1

    def __bool__(self):
        return bool(self.entries) or bool(self.more)


def single_source(path_or_bytes, filename=None):
    """(seekable binary handle, label, close when done) for one file, stream or bytes; None for
    a folder, a list of several, or anything else (those are read whole)."""
    item = path_or_bytes
    if isinstance(item, list | tuple) and len(item) == 1:
        item = item[0]
        if isinstance(item, tuple) and len(item) == 2:
            filename, item = item
    if isinstance(item, bytes | bytearray):
        return io.BytesIO(item), filename or "upload", True
    if hasattr(item, "read") and hasattr(item, "seek"):
        return item, filename or getattr(item, "name", None) or "upload", False
    if isinstance(item, str | Path) and Path(item).is_file():
        return open(item, "rb"), str(item), True
    return None


def peek(handle, size=PEEK_BYTES):
    """The head of the stream as text (for sniffing the format); the stream is rewound."""
    handle.seek(0)
    head = handle.read(size).decode("utf-8-sig", "replace")
    handle.seek(0)
    return head


def text_lines(handle, problems):
    """The stream's lines as text (ends kept), from the start; a line that is not UTF-8 is
    reported with its number and read with replacement characters."""
    handle.seek(0)
    for number, raw in enumerate(handle, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(None, f"is not UTF-8 text (byte {exc.start} of the line)", number)
            yield raw.decode("utf-8", "replace")


def checked(handle, fmt, label, problems):
    """(ParsedTask, model field dict) for every task of the stream that passes its checks."""
    for task in LINE_PARSERS[fmt](text_lines(handle, problems), label, problems):
        data = finish(task, problems)
        if data is not None and not task.bad:
            yield task, data
