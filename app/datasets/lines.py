"""Reading YAML and JSON while keeping line numbers, so every error can say where it is."""

import functools
import json

from .. import jsontext

_TOO_LONG = f"not valid YAML: a number longer than {jsontext.MAX_DIGITS} digits"
_TOO_DEEP = f"not valid YAML: nested too deeply (more than {jsontext.MAX_DEPTH} levels)"


class LineDict(dict):
    """A mapping from YAML/JSON that remembers its own line and the line of each key."""

    line = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_lines = {}
        self.duplicates = []  # (key, line) of keys given twice

    def line_of(self, key):
        """Line of `key` in the source, else the mapping's own line."""
        return self.key_lines.get(key, self.line)


def _construct_map(loader, node):
    data = LineDict()
    data.line = node.start_mark.line + 1
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            key = str(key)
        line = key_node.start_mark.line + 1
        if key in data:
            data.duplicates.append((key, line))
        data[key] = loader.construct_object(value_node, deep=True)
        data.key_lines[key] = line


@functools.cache
def _line_loader():
    """libyaml's safe loader (PyYAML's own without it) that builds LineDicts: made on first use,
    so a JSON or JSONL dataset's check never imports yaml (~16 % of a `validate`'s CPU)."""
    import yaml

    class LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        pass

    LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
    return LineLoader


class YamlSyntaxError(ValueError):
    """The text is not YAML; `line` says where the parser gave up."""

    def __init__(self, message, line=None):
        super().__init__(message)
        self.line = line


def load_yaml(text):
    """Parse YAML into LineDicts and lists; raises YamlSyntaxError with the line."""
    import yaml  # lazy, as _line_loader

    try:
        data = yaml.load(text, Loader=_line_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        raise YamlSyntaxError(f"not valid YAML: {problem}", line) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise YamlSyntaxError(_TOO_DEEP) from None
    except ValueError:  # int() refuses integer text past Python's digit limit
        raise YamlSyntaxError(_TOO_LONG) from None
    if jsontext.depth_over(data):
        raise YamlSyntaxError(_TOO_DEEP)
    return data


_decoder = json.JSONDecoder()
_WS = " \t\r\n"


def _skip_ws(text, pos):
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def array_element_lines(text, key=None):
    """Lines where each element of the top-level array (or of `key` in a top-level object) starts.

    The text must already be known to be valid JSON; returns [] when the shape differs.
    """
    pos = _skip_ws(text, 0)
    if key is not None:
        if text[pos : pos + 1] != "{":
            return []
        pos = _skip_ws(text, pos + 1)
        while pos < len(text) and text[pos] != "}":
            name, pos = _decoder.raw_decode(text, pos)
            pos = _skip_ws(text, pos)
            pos = _skip_ws(text, pos + 1)  # the colon
            if name == key:
                break
            _, pos = _decoder.raw_decode(text, pos)
            pos = _skip_ws(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip_ws(text, pos + 1)
        else:
            return []
    if text[pos : pos + 1] != "[":
        return []
    lines = []
    pos = _skip_ws(text, pos + 1)
    # Count newlines incrementally: one pass over the text, not one per element.
    seen, line = 0, 1
    while pos < len(text) and text[pos] != "]":
        line += text.count("\n", seen, pos)
        seen = pos
        lines.append(line)
        _, pos = _decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos : pos + 1] == ",":
            pos = _skip_ws(text, pos + 1)
    return lines


def load_json(text):
    """Parse JSON; objects become LineDicts (without per-key lines). Raises YamlSyntaxError."""
    try:
        return jsontext.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON: {exc.msg} (column {exc.colno})"
        raise YamlSyntaxError(message, exc.lineno) from None


def _pairs(pairs):
    data = LineDict()
    for key, value in pairs:
        if key in data:
            data.duplicates.append((key, None))
        data[key] = value
    return data
