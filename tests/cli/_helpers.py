"""Checks shared by the CLI tests: strict JSON and the one-line error contract."""
import json


def strict_json(text):
    """Parse JSON refusing the non-standard NaN/Infinity tokens (as JavaScript and jq do)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def one_error_line(code, err, command):
    """The exit status 2, no traceback, and exactly one line ``energystats COMMAND: error: ...``,
    the last one of stderr; returns that line."""
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert lines == [err.strip().splitlines()[-1]], err
    assert lines[0].startswith(f"energystats {command}: error: "), err
    return lines[0]
