#!/usr/bin/env python3
"""Soak benchmark: a mixed load against a running zinfer server for a given time, then the two
figures that show a leak, from the server itself.

  tools/soak.py --port 8000 --pid $(pgrep -f 'zinfer serve') --duration 1800 --warmup 120

The load, from --concurrency client threads, each picking one kind at a time at random:
  stream      a streamed chat completion read to its [DONE]
  complete    a non-streamed completion, n = 1..3
  abort       a stream the client drops after its first events (the server must abort it)
  disconnect  a non-streamed request whose connection is closed before the answer
  zmq         a ZeroMQ GenerateRequest (--zmq ENDPOINT; pyzmq + msgpack), half of them aborted
              by an Abort message after the first delta

Reported (one JSON object on stdout, also written to --out):
  - requests of each kind, their HTTP statuses, and any failure that is not the expected one
  - leaked KV blocks: zinfer_gpu_blocks - zinfer_gpu_blocks_free from /metrics once the server is
    idle again at the end (every request finished or aborted), which must be 0
  - RSS of the server process (--pid; VmRSS of /proc/PID/status, summed over the process group of
    a `launch` deployment with --pgid) after the warm-up and at the end, and the growth between

Exit status 0 when no block leaked, no request failed unexpectedly and the RSS grew by at most
--max-rss-growth (default 0.10) after the warm-up; 1 otherwise.
"""

import argparse
import http.client
import json
import os
import random
import signal
import sys
import threading
import time
from collections import Counter

PROTOCOL = (1, 6)
GENERATE_REQUEST, ABORT, ERROR_REPLY, TEXT_DELTA = 10, 12, 3, 15


def rss_kb(pid, pgid=False):
    """VmRSS in kB of pid, or of every process of its process group."""
    pids = [pid]
    if pgid:
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.getpgid(int(entry)) == pid:
                        pids.append(int(entry))
                except OSError:
                    pass
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def metrics(host, port):
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


class Load:
    def __init__(self, args):
        self.args = args
        self.counts = Counter()
        self.statuses = Counter()
        self.failures = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.headers = {"Content-Type": "application/json"}
        if args.api_key:
            self.headers["Authorization"] = f"Bearer {args.api_key}"

    def note(self, kind, status=None, failure=None):
        with self.lock:
            self.counts[kind] += 1
            if status is not None:
                self.statuses[f"{kind}:{status}"] += 1
            if failure and len(self.failures) < 50:
                self.failures.append(f"{kind}: {failure}")

    def prompt(self, rng):
        words = ["alpha", "beta", "gamma", "delta", "soak", "tokens", "cache", "block", "stream", "zinfer"]
        return " ".join(rng.choice(words) for _ in range(rng.randint(3, self.args.max_prompt_words)))

    def connection(self):
        return http.client.HTTPConnection(self.args.host, self.args.port, timeout=300)

    def stream(self, rng, drop_after=None):
        body = {"messages": [{"role": "user", "content": self.prompt(rng)}], "max_tokens": rng.randint(1, 48),
                "stream": True, "temperature": rng.choice([0, 0.8]), "n": rng.choice([1, 1, 2])}
        conn = self.connection()
        kind = "abort" if drop_after else "stream"
        try:
            conn.request("POST", "/v1/chat/completions", body=json.dumps(body), headers=self.headers)
            resp = conn.getresponse()
            if resp.status != 200:
                return self.note(kind, resp.status, None if resp.status == 429 else resp.read()[:200])
            seen = b""
            while True:
                chunk = resp.read1(4096)
                if not chunk:
                    break
                seen += chunk
                if drop_after and seen.count(b"data: ") >= drop_after:
                    conn.sock.close()  # gone mid-stream: the server must abort the request
                    return self.note(kind, 200)
            if not seen.endswith(b"data: [DONE]\n\n"):
                return self.note(kind, 200, f"stream without [DONE]: ...{seen[-120:]!r}")
            if b'"error"' in seen:
                return self.note(kind, 200, f"error event: {seen[-200:]!r}")
            self.note(kind, 200)
        except OSError as e:
            self.note(kind, failure=repr(e))
        finally:
            conn.close()

    def complete(self, rng, disconnect=False):
        body = {"prompt": self.prompt(rng), "max_tokens": rng.randint(1, 32), "n": rng.randint(1, 3),
                "temperature": 0.7, "seed": rng.randint(0, 1000)}
        kind = "disconnect" if disconnect else "complete"
        conn = self.connection()
        try:
            conn.request("POST", "/v1/completions", body=json.dumps(body), headers=self.headers)
            if disconnect:
                time.sleep(rng.uniform(0, 0.05))
                conn.sock.close()
                return self.note(kind, "closed")
            resp = conn.getresponse()
            data = resp.read()
            if resp.status != 200:
                return self.note(kind, resp.status, None if resp.status == 429 else data[:200])
            out = json.loads(data)
            if len(out["choices"]) != body["n"]:
                return self.note(kind, 200, f"{len(out['choices'])} choices for n={body['n']}")
            self.note(kind, 200)
        except OSError as e:
            self.note(kind, failure=repr(e))
        finally:
            conn.close()

    def zmq_one(self, rng, zmq, msgpack, request_id):
        ctx = zmq.Context.instance()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(self.args.zmq)
        abort = rng.random() < 0.5
        try:
            req = {"request_id": request_id, "prompt": self.prompt(rng), "api_key": self.args.api_key or "",
                   "sampling": {"max_tokens": rng.randint(1, 32), "n": rng.choice([1, 2])}}
            s.send(msgpack.packb([*PROTOCOL, GENERATE_REQUEST, req], use_bin_type=True))
            finished = 0
            while True:
                if not s.poll(120000):
                    return self.note("zmq", failure="no message within 120 s")
                major, minor, mtype, payload = msgpack.unpackb(s.recv(), raw=False)
                if mtype == ERROR_REPLY:
                    code = payload.get("code")
                    return self.note("zmq", code, None if code == 429 else payload)
                if mtype == TEXT_DELTA:
                    if abort:
                        s.send(msgpack.packb([*PROTOCOL, ABORT, {"request_id": request_id, "reason": "abort",
                                                                 "index": -1}], use_bin_type=True))
                        return self.note("zmq", "aborted")
                    if payload.get("finish_reason"):
                        finished += 1
                        if finished == req["sampling"]["n"]:
                            return self.note("zmq", "done")
        finally:
            s.close()

    def worker(self, seed):
        rng = random.Random(seed)
        zmq = msgpack = None
        if self.args.zmq:
            import msgpack  # noqa: F811
            import zmq  # noqa: F811
        kinds = ["stream", "complete", "abort", "disconnect"] + (["zmq"] if zmq else [])
        request_id = seed * 1_000_000
        while not self.stop.is_set():
            kind = rng.choice(kinds)
            if kind == "stream":
                self.stream(rng)
            elif kind == "abort":
                self.stream(rng, drop_after=rng.randint(1, 3))
            elif kind == "complete":
                self.complete(rng)
            elif kind == "disconnect":
                self.complete(rng, disconnect=True)
            else:
                request_id += 1
                try:
                    self.zmq_one(rng, zmq, msgpack, request_id)
                except Exception as e:  # noqa: BLE001 - reported, the soak goes on
                    self.note("zmq", failure=repr(e))


def wait_idle(host, port, timeout):
    """Metrics once nothing runs or waits and the gateway has nothing in flight (or the last ones)."""
    deadline = time.monotonic() + timeout
    while True:
        m = metrics(host, port)
        busy = sum(m.get(k, 0) for k in ("zinfer_num_requests_running", "zinfer_num_requests_waiting",
                                          "zinfer_num_requests_swapped", "zinfer_gateway_requests_in_flight"))
        if busy == 0 or time.monotonic() > deadline:
            time.sleep(0.5)  # a fresher snapshot of the scheduler's stats
            return metrics(host, port), busy


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--zmq", default="", help="the ZeroMQ endpoint, to add ZeroMQ requests to the mix")
    p.add_argument("--pid", type=int, required=True, help="the server's pid (for its RSS)")
    p.add_argument("--pgid", action="store_true", help="sum the RSS over --pid's process group (zinfer launch)")
    p.add_argument("--duration", type=float, default=300, help="seconds of load after the warm-up")
    p.add_argument("--warmup", type=float, default=60, help="seconds of load before the first RSS figure")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-prompt-words", type=int, default=200)
    p.add_argument("--api-key", default=os.environ.get("ZINFER_API_KEY", ""))
    p.add_argument("--max-rss-growth", type=float, default=0.10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="")
    args = p.parse_args()

    load = Load(args)
    threads = [threading.Thread(target=load.worker, args=(args.seed * 1000 + i,), daemon=True)
               for i in range(args.concurrency)]
    signal.signal(signal.SIGINT, lambda *_: load.stop.set())
    start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(args.warmup)
    rss_warm = rss_kb(args.pid, args.pgid)
    samples = [(round(time.monotonic() - start, 1), rss_warm)]
    end = time.monotonic() + args.duration
    while time.monotonic() < end and not load.stop.is_set():
        time.sleep(min(10.0, max(0.0, end - time.monotonic())))
        samples.append((round(time.monotonic() - start, 1), rss_kb(args.pid, args.pgid)))
    load.stop.set()
    for t in threads:
        t.join(timeout=300)
    m, busy = wait_idle(args.host, args.port, 120)
    rss_end = rss_kb(args.pid, args.pgid)
    leaked = int(m.get("zinfer_gpu_blocks", 0) - m.get("zinfer_gpu_blocks_free", 0))
    growth = (rss_end - rss_warm) / rss_warm if rss_warm else float("inf")
    report = {
        "duration_s": round(time.monotonic() - start, 1), "warmup_s": args.warmup, "concurrency": args.concurrency,
        "requests": dict(load.counts), "statuses": dict(load.statuses), "failures": load.failures,
        "busy_at_end": busy, "kv_blocks": int(m.get("zinfer_gpu_blocks", 0)), "kv_blocks_leaked": leaked,
        "rss_kb_after_warmup": rss_warm, "rss_kb_end": rss_end, "rss_growth": round(growth, 4),
        "rss_samples": samples,
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    ok = leaked == 0 and busy == 0 and not load.failures and growth <= args.max_rss_growth
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
