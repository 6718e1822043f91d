"""Shared by the structured-output e2e tests (issue 19): the reference validator (Debian's
python3-jsonschema, not our grammar) and the logit biases that let a model of random weights end
what the grammar allows.

The default model's logits are small and random: within what the grammar allows it picks nearly
uniformly among 150k tokens, so a free string would rarely close. The tests bias the few tokens
that close a string, an array or an object (a bias changes nothing where the grammar masks the
token), or end-of-sequence, which the grammar allows only where the output is complete."""

import datetime
import json
import os
import re

import jsonschema  # Debian's python3-jsonschema

from e2e_common import TestFailure

EOS = 151645        # the default model's (Qwen3's) <|im_end|>
THINK_END = 151668  # </think>

_RFC3339_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$")


def _is_time(text):
    return not isinstance(text, str) or bool(_RFC3339_TIME.match(text))


def _is_date_time(text):
    if not isinstance(text, str):
        return True
    date, sep, time_part = text.partition("T")
    if not sep or not _is_time(time_part):
        return False
    try:
        datetime.date.fromisoformat(date)
        return len(date) == 10
    except ValueError:
        return False


def format_checker():
    """jsonschema's checkers; time and date-time need rfc3339-validator, which Debian's package does
    not pull in, so those two are RFC 3339 checks written here."""
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    checker.checks("time")(_is_time)
    checker.checks("date-time")(_is_date_time)
    return checker


FORMATS = format_checker()


def validate(schema, text, what):
    """Parses `text` and validates it against `schema`; returns the value, or fails naming `what`."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise TestFailure(f"{what}: the output is not JSON ({e}): {text!r}")
    errors = sorted(jsonschema.Draft202012Validator(schema, format_checker=FORMATS).iter_errors(value), key=str)
    if errors:
        raise TestFailure(f"{what}: the output {text!r} does not validate: {errors[0].message} "
                          f"(at {list(errors[0].absolute_path)}); schema {json.dumps(schema)}")
    return value


def token_ids(model_dir, texts):
    """The ids of those of `texts` that are single tokens of the model's vocabulary."""
    with open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    # GPT-2's byte map leaves printable ASCII as it is.
    return [vocab[t] for t in texts if t in vocab]


def json_bias(model_dir):
    """logit_bias for JSON outputs: '"' ends a string; '@' and '.' are what an email's parts wait
    for (format email); brackets end arrays and objects."""
    closing = {t: 10 for t in token_ids(model_dir, ['"', '"}', '"]', '",', "@", "."])}
    closing.update({t: 4 for t in token_ids(model_dir, ["}", "]", "},", "],"])})
    return {str(t): b for t, b in closing.items()}


def eos_bias():
    """logit_bias for regexes: end-of-sequence, which the grammar allows only where the regex accepts."""
    return {str(EOS): 8}
