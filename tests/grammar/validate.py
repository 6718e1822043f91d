# The external judge of the JSON Schema tests: Debian's python3-jsonschema, Draft 2020-12, with
# format checking. Input: a JSON file of [{"schema": text, "instance": hex of the instance's
# bytes}, ...]; output: one
# line per item, "valid", "invalid" or "nonjson" (the instance is not JSON at all).
import json
import sys

import jsonschema

items = json.load(open(sys.argv[1]))
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
validators = {}
for item in items:
    text = item["schema"]
    if text not in validators:
        validators[text] = jsonschema.Draft202012Validator(json.loads(text), format_checker=checker)
    try:
        instance = json.loads(bytes.fromhex(item["instance"]).decode("utf-8"))
    except ValueError:
        print("nonjson")
        continue
    print("valid" if validators[text].is_valid(instance) else "invalid")
