#!/usr/bin/env python3
"""Invariants 32 and 22 of docs/architecture.md, checked on the sources: which folder may include
which (dependencies point one way), and that CUDA sources reach no ZeroMQ, spdlog or fmt header,
directly or through the headers they include. Prints every violation and exits 1 if there is one.

usage: check_layering.py SOURCE_DIR"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
SOURCES = (".h", ".cpp", ".cu", ".cuh")

# Folder (prefix of the path) -> the folders its quoted includes may name. The first matching
# prefix decides. "third-party" headers in <...> are checked separately below.
# settings/ (one setting's description, standard library only) is below every folder that owns
# settings and includes nothing of the project.
ALLOWED = [
    ("settings/", []),
    ("protocol/", ["protocol/"]),
    ("runtime/", ["runtime/", "protocol/", "settings/"]),
    ("gateway/", ["gateway/", "actors/grammar/", "runtime/", "protocol/", "settings/"]),
    ("gpu/", ["gpu/", "settings/"]),
    ("actors/text/", ["actors/text/"]),
    ("actors/tokenizer/", ["actors/tokenizer/", "actors/text/"]),
    ("actors/chat_template/", ["actors/chat_template/", "actors/text/"]),
    ("actors/grammar/", ["actors/grammar/", "actors/tokenizer/", "actors/text/", "protocol/"]),
    ("actors/kv/", ["actors/kv/", "protocol/"]),
    ("actors/scheduler/", ["actors/scheduler/", "actors/kv/", "protocol/", "settings/"]),
    ("actors/detokenizer/", ["actors/detokenizer/", "actors/tokenizer/", "actors/text/", "runtime/", "protocol/"]),
    ("actors/executor/", ["actors/executor/", "actors/grammar/", "actors/tokenizer/", "gpu/", "runtime/", "protocol/"]),
    ("actors/pipeline/", ["actors/", "gateway/", "gpu/", "runtime/", "protocol/", "settings/"]),
]

# Folders that are pure libraries: no sockets, no message loop (Invariant 32).
NO_ZMQ = ["settings/", "protocol/", "gpu/", "actors/text/", "actors/tokenizer/", "actors/chat_template/", "actors/kv/",
          "actors/scheduler/"]
ZMQ_HEADERS = re.compile(r"^(zmq\.h|zmq\.hpp|zmq_addon\.hpp)$")
# What nvcc must never see (Invariant 22).
CUDA_FORBIDDEN = re.compile(r"^(zmq\.h|zmq\.hpp|zmq_addon\.hpp|spdlog/.*|fmt/.*)$")


def sources(root):
    for top in ("settings", "protocol", "runtime", "gateway", "gpu", "actors"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(SOURCES):
                    path = os.path.join(folder, f)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def includes(root, path, cache={}):
    if path not in cache:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            cache[path] = INCLUDE.findall(f.read())
    return cache[path]


def main():
    root = sys.argv[1]
    errors = []
    files = sorted(sources(root))
    for path in files:
        rule = next((allowed for prefix, allowed in ALLOWED if path.startswith(prefix)), None)
        for kind, name in includes(root, path):
            if kind == '"':
                if rule is not None and "/" in name and not any(name.startswith(a) for a in rule):
                    errors.append(f"{path}: includes {name} (allowed: {', '.join(rule)})")
            elif ZMQ_HEADERS.match(name) and any(path.startswith(p) for p in NO_ZMQ):
                errors.append(f"{path}: includes <{name}> (this folder has no sockets)")
    # CUDA sources: follow quoted includes to every header they reach.
    for path in files:
        if not path.endswith((".cu", ".cuh")):
            continue
        seen, todo = set(), [path]
        while todo:
            current = todo.pop()
            if current in seen or not os.path.exists(os.path.join(root, current)):
                continue
            seen.add(current)
            for kind, name in includes(root, current):
                if kind == '"':
                    todo.append(name)
                elif CUDA_FORBIDDEN.match(name):
                    errors.append(f"{path}: reaches <{name}> through {current}")
    for e in errors:
        print(e)
    print(f"{len(files)} files checked, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
