"""The error hierarchy domain code raises; web, API and CLI translate it at one edge each."""


class LlmbenchError(Exception):
    """Base for errors a person should read."""

    status = 500

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def to_dict(self):
        return {"error": self.message}


class ValidationError(LlmbenchError):
    """Bad input: carries one entry per problem, each naming the field (and file/line)."""

    status = 400

    def __init__(self, errors, message=None):
        if isinstance(errors, str):
            errors = [{"field": None, "message": errors}]
        self.errors = list(errors)
        super().__init__(message or "; ".join(format_error(e) for e in self.errors))

    @classmethod
    def field(cls, field, message, line=None, file=None):
        entry = {"field": field, "message": message}
        if line is not None:
            entry["line"] = line
        if file is not None:
            entry["file"] = file
        return cls([entry])

    def to_dict(self):
        return {"error": self.message, "errors": self.errors}


def format_error(entry):
    """One line per problem: 'file:line: field: message'."""
    where = []
    if entry.get("file"):
        where.append(str(entry["file"]))
    if entry.get("line") is not None:
        where.append(f"line {entry['line']}")
    prefix = ", ".join(where)
    field = entry.get("field")
    text = f"{field}: {entry['message']}" if field else entry["message"]
    return f"{prefix}: {text}" if prefix else text


class NotFound(LlmbenchError):
    status = 404


class Conflict(LlmbenchError):
    status = 409


class StorageFull(LlmbenchError):
    """The database has no room left (a full disk): nothing of the request was kept."""

    status = 507

    def __init__(self, message=None):
        super().__init__(
            message
            or "The database's disk is full, so nothing was saved. Free some space (or move "
            "LLMBENCH_DB to a larger disk), then try again."
        )
