#!/usr/bin/python3
"""End-to-end test of the scheduler protocol (docs/scheduler-protocol.md): `zinfer serve` without
its built-in scheduler, examples/python/scheduler.py in its place, OpenAI requests over HTTP.

    /usr/bin/python3 external_scheduler_test.py --zinfer build/bin/zinfer \
        --scheduler examples/python/scheduler.py --model-dir build/models/default

Checks, with greedy sampling and ignore_eos:
  - concurrent /v1/completions requests (more than the KV pool holds at once, prompts longer than
    the token budget of a step) finish with finish_reason "length", the asked number of tokens,
    the right usage, and the same token ids and logprobs as `zinfer generate` with the built-in
    scheduler; a streaming request gives the same tokens as its non-streaming twin;
  - a request that can never fit in the KV pool is answered 413;
  - a streaming client that leaves makes the gateway send Abort, which the scheduler applies;
  - afterwards every KV block is free again (the scheduler's Stats through /metrics).
Everything started here is stopped at the end, whatever happens. Exit status 0 = passed,
1 = failed, 77 = skipped (python3-zmq or python3-msgpack missing).
"""

# Invariant 11 (docs/architecture.md): an actor left out of [runtime].actors is replaced by another process.
# Invariant 31 (docs/architecture.md): the command line is a contract (`zinfer serve`, `generate --json`).

import argparse
import ctypes
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BLOCK_SIZE = 16
NUM_BLOCKS = 32                # small on purpose: the batch below needs more at once
MAX_NUM_BATCHED_TOKENS = 48    # the 70-token prompts are prefilled in chunks
MAX_NUM_SEQS = 6
HTTP_TIMEOUT_S = 120


class Failure(Exception):
    pass


def die_with_parent():
    """In the child before exec: SIGTERM it when this test process dies, even by SIGKILL (ctest's
    timeout), so that no server outlives its test."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def on_deadline(_signum, _frame):
    raise Failure("the test ran past its --deadline")


def check(condition, message):
    if not condition:
        raise Failure(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_cases():
    """(prompt ids, max_tokens) of mixed lengths: within one block, across blocks, chunked."""
    rng = random.Random(1234)
    lengths = [(3, 8), (16, 5), (17, 20), (40, 33), (70, 12), (70, 30), (5, 48), (33, 1), (64, 16), (9, 25)]
    return [([rng.randrange(1000, 150000) for _ in range(p)], m) for p, m in lengths]


def blocks_needed(prompt_len, max_tokens):
    return -(-(prompt_len + max_tokens) // BLOCK_SIZE)


def reference(zinfer, model_dir, prompt, max_tokens):
    """Greedy tokens and logprobs from `zinfer generate` (the built-in scheduler)."""
    cmd = [zinfer, "generate", "--model", model_dir, "--prompt-ids", ",".join(map(str, prompt)),
           "--max-tokens", str(max_tokens), "--temperature", "0", "--ignore-eos", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=HTTP_TIMEOUT_S)
    check(done.returncode == 0, f"zinfer generate failed ({done.returncode}): {done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["token_ids"], out["logprobs"]


def write_config(path, work, model_dir, port):
    ipc = {name: f"ipc://{work}/{name}.ipc" for name in ("tokenizer", "scheduler", "executor", "detokenizer", "gateway")}
    with open(path, "w") as f:
        f.write(f"""[server]
host = "127.0.0.1"
port = {port}
zmq_endpoint = ""

[model]
path = "{model_dir}"
device = "cpu"

[scheduler]
max_num_seqs = {MAX_NUM_SEQS}
max_num_batched_tokens = {MAX_NUM_BATCHED_TOKENS}

[cache]
block_size = {BLOCK_SIZE}
num_gpu_blocks = {NUM_BLOCKS}

[tokenizer]
workers = 1

[endpoints]
""")
        for name, endpoint in ipc.items():
            f.write(f'{name} = "{endpoint}"\n')
        f.write('\n[runtime]\nlog_level = "warn"\nactors = ["executor", "detokenizer", "tokenizer", "gateway"]\n')


def post(port, body, timeout=HTTP_TIMEOUT_S):
    """(status, parsed JSON) of a POST to /v1/completions."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.status, r.read().decode()


def completion_body(prompt, max_tokens, stream=False):
    return {"model": "default", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True,
            "logprobs": 1, "return_token_ids": True, "stream": stream}


def stream_tokens(port, prompt, max_tokens):
    """Token ids and finish reason of a streaming request, read to its end."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions",
                                 data=json.dumps(completion_body(prompt, max_tokens, stream=True)).encode(),
                                 headers={"Content-Type": "application/json"})
    ids, finish = [], None
    with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as r:
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[len("data: "):])
            for choice in event.get("choices", []):
                ids += choice.get("token_ids") or []
                finish = choice.get("finish_reason") or finish
    return ids, finish


def leave_a_stream(port, prompt, max_tokens):
    """Starts a long streaming request, reads its first events, then drops the connection."""
    body = json.dumps(completion_body(prompt, max_tokens, stream=True)).encode()
    conn = socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT_S)
    conn.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    received = b""
    while received.count(b"data: ") < 3:
        chunk = conn.recv(4096)
        check(chunk, "the streaming request ended before it streamed: " + received.decode(errors="replace")[-500:])
        received += chunk
    conn.close()


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise Failure(f"/metrics has no {name}")


def wait_until(what, predicate, timeout_s, processes):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for name, p in processes.items():
            check(p.poll() is None, f"{name} exited with status {p.returncode} while waiting for {what}")
        try:
            if predicate():
                return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.2)
    raise Failure(f"timed out after {timeout_s} s waiting for {what}")


def stop(processes):
    for p in processes.values():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in processes.values():
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_test(args, work):
    model_dir = os.path.abspath(args.model_dir)
    if not os.path.exists(os.path.join(model_dir, "config.json")):
        made = subprocess.run([args.zinfer, "make-model", "--out", model_dir], capture_output=True, text=True,
                              timeout=HTTP_TIMEOUT_S)
        check(made.returncode == 0, f"zinfer make-model failed: {made.stderr[-2000:]}")

    cases = make_cases()
    print(f"reference: {len(cases)} greedy runs of zinfer generate", flush=True)
    expected = [reference(args.zinfer, model_dir, prompt, m) for prompt, m in cases]
    check(sum(blocks_needed(len(p), m) for p, m in cases) > NUM_BLOCKS, "the batch must not fit the pool at once")

    port = free_port()
    config = os.path.join(work, "config.toml")
    write_config(config, work, model_dir, port)
    processes = {}
    sched_log = open(os.path.join(work, "scheduler.log"), "w+")
    serve_log = open(os.path.join(work, "serve.log"), "w+")
    passed = False
    try:
        processes["scheduler.py"] = subprocess.Popen(
            [sys.executable, args.scheduler, "--config", config, "--verbose"], stdout=sched_log, stderr=sched_log,
            preexec_fn=die_with_parent)
        processes["zinfer serve"] = subprocess.Popen([args.zinfer, "serve", "--config", config],
                                                     stdout=serve_log, stderr=serve_log, preexec_fn=die_with_parent)
        wait_until("/health", lambda: get(port, "/health")[0] == 200, 120, processes)

        # A client that leaves: the gateway aborts its request; the scheduler frees its blocks.
        leave_a_stream(port, [11, 12, 13, 14, 15], 480)  # 31 of the 32 blocks

        # The batch, all at once.
        results = [(None, "no answer in time")] * len(cases)

        def one(i):
            try:
                results[i] = post(port, completion_body(*cases[i]))
            except Exception as e:  # reported below with the case it belongs to
                results[i] = (None, repr(e))

        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(cases))]
        for t in threads:
            t.start()
        streamed = stream_tokens(port, *cases[3])
        for t in threads:
            t.join(timeout=HTTP_TIMEOUT_S)
        for i, ((prompt, max_tokens), (want_ids, want_lps), (status, body)) in enumerate(zip(cases, expected, results)):
            who = f"case {i} ({len(prompt)} prompt tokens, max_tokens {max_tokens})"
            check(status == 200, f"{who}: HTTP {status}: {body}")
            choice = body["choices"][0]
            check(choice["finish_reason"] == "length", f"{who}: finish_reason {choice['finish_reason']}")
            check(len(choice["token_ids"]) == max_tokens, f"{who}: {len(choice['token_ids'])} tokens")
            check(body["usage"]["completion_tokens"] == max_tokens and body["usage"]["prompt_tokens"] == len(prompt),
                  f"{who}: usage {body['usage']}")
            check(choice["token_ids"] == want_ids, f"{who}: tokens {choice['token_ids']} != generate's {want_ids}")
            got_lps = choice["logprobs"]["token_logprobs"]
            check(len(got_lps) == len(want_lps) and all(abs(a - b) < 1e-3 for a, b in zip(got_lps, want_lps)),
                  f"{who}: logprobs {got_lps} != generate's {want_lps}")
        check(streamed == (expected[3][0], "length"), f"streamed {streamed} != {expected[3][0]}")
        sched_log.seek(0)
        steps = sched_log.read().count("] step ")
        check(steps > 0, "scheduler.py planned no step: did something else bind the scheduler endpoint?")
        print(f"{len(cases)} concurrent requests and 1 stream: same greedy tokens as zinfer generate", flush=True)

        status, body = post(port, completion_body(list(range(100, 400)), 400))
        check(status == 413, f"a request larger than the KV pool: HTTP {status} {body}, expected 413")

        def pool_is_free():
            text = get(port, "/metrics")[1]
            return (metric(text, "zinfer_gpu_blocks") == NUM_BLOCKS and metric(text, "zinfer_gpu_blocks_free") == NUM_BLOCKS
                    and metric(text, "zinfer_num_requests_running") == 0)

        wait_until("every KV block back in the pool", pool_is_free, 30, processes)
        sched_log.seek(0)
        check("Abort (abort" in sched_log.read(), "the scheduler never received the gateway's Abort")
        print("abort applied, 413 for an oversized request, every block free afterwards", flush=True)
        passed = True
    finally:
        stop(processes)
        for name, log in (("scheduler.py", sched_log), ("zinfer serve", serve_log)):
            if args.show_logs or not passed:
                log.seek(0)
                print(f"---- {name} log (tail) ----\n{log.read()[-3000:]}", flush=True)
            log.close()
    for name, p in processes.items():
        check(p.returncode == 0, f"{name} exited with status {p.returncode} after SIGTERM")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zinfer", required=True)
    parser.add_argument("--scheduler", required=True, help="examples/python/scheduler.py")
    parser.add_argument("--model-dir", required=True, help="the default model (made here when missing)")
    parser.add_argument("--show-logs", action="store_true")
    parser.add_argument("--deadline", type=int, default=540, help="seconds before the test gives up and cleans up")
    args = parser.parse_args()
    try:
        import msgpack  # noqa: F401  (the scheduler needs them; checked here to skip cleanly)
        import zmq  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (install python3-zmq and python3-msgpack)")
        return 77
    work = tempfile.mkdtemp(prefix="zinfer-ext-", dir="/tmp")  # short: ipc paths are limited to ~100 bytes
    signal.signal(signal.SIGALRM, on_deadline)
    signal.alarm(args.deadline)
    try:
        run_test(args, work)
    except (Failure, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
        print(f"FAILED: {e}", flush=True)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
