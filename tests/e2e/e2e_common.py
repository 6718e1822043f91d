"""Shared helpers of zinfer's end-to-end tests (tests/e2e): start a server on free ports from a
temporary config, talk to it over HTTP (OpenAI API, SSE parsed by hand) and ZeroMQ (msgpack
envelopes of docs/protocol.md), read /metrics, and always stop the server, even on failure.

Only the Python standard library plus Debian's python3-zmq and python3-msgpack."""

import argparse
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import msgpack
import zmq

HOST = "127.0.0.1"
STATS_REFRESH_S = 0.1  # how often the scheduler reports its Stats to the gateway

# docs/protocol.md, protocol 1.0.
PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 0
PING, PONG, ERROR_REPLY = 1, 2, 3
GENERATE_REQUEST, ABORT, TEXT_DELTA = 10, 12, 15
STATS_REQUEST, STATS = 30, 31


class TestFailure(AssertionError):
    pass


def check(condition, message):
    """An assertion that survives `python3 -O` and says what was expected."""
    if not condition:
        raise TestFailure(message)


def check_equal(got, expected, what):
    if got != expected:
        raise TestFailure(f"{what}: expected {expected!r}, got {got!r}")


def log(*parts):
    print(*parts, flush=True)


# ---- command line ------------------------------------------------------------------------------

def parse_args(description):
    """Every e2e script takes the zinfer binary, the source dir and the model dir (CMake passes them)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--zinfer", required=True, help="path of the zinfer binary")
    p.add_argument("--source-dir", required=True, help="the checkout (for examples/python/client.py)")
    p.add_argument("--model", required=True, help="model folder (zinfer make-model)")
    p.add_argument("--client", default="", help="path of zinfer-client (optional)")
    p.add_argument("--deployment", choices=["serve", "launch"], default="serve",
                   help="serve: actors as threads of one process; launch: one process per actor over ipc://")
    p.add_argument("--kv-cache-dtype", choices=["auto", "fp8"], default="auto",
                   help="[cache] kv_cache_dtype of every server the test starts (fp8: the same checks on e4m3 blocks)")
    p.add_argument("--timeout", type=int, default=280,
                   help="seconds before the test gives up (below ctest's TIMEOUT, so that it still stops its server)")
    return p.parse_args()


class TestTimeout(Exception):
    pass


def _raise_timeout(signum, frame):
    raise TestTimeout(f"the test ran out of time (signal {signum})")


def main_wrapper(body, timeout_s=None):
    """Runs a test body; prints the failure and exits 1 on any exception, 0 on success. SIGTERM and
    the deadline raise inside the body, so its `with Server(...)` still stops the server."""
    signal.signal(signal.SIGTERM, _raise_timeout)
    signal.signal(signal.SIGALRM, _raise_timeout)
    if timeout_s:
        signal.alarm(timeout_s)
    try:
        body()
    except Exception:  # noqa: BLE001 - every failure must become a non-zero exit for ctest
        traceback.print_exc()
        print("FAILED", flush=True)
        sys.exit(1)
    print("PASSED", flush=True)
    sys.exit(0)


# ---- the server --------------------------------------------------------------------------------

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string for our plain values
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {v!r}")


def toml_text(sections):
    lines = []
    for name, values in sections.items():
        lines.append(f"[{name}]")
        for key, value in values.items():
            lines.append(f"{key} = {toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def _die_with_parent():
    """In the server's child process: SIGKILL it if the test process dies without cleaning up
    (e.g. killed by ctest), so that no server outlives its test."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Server:
    """One zinfer deployment on free ports: `zinfer serve` (threads) or `zinfer launch` (one process
    per actor over ipc:// and shm:// paths in a private temp dir, as configs/multiproc.toml). Use as a context manager: the whole process
    group is terminated on exit, and on failure the tail of its log is printed."""

    def __init__(self, args, scheduler=None, cache=None, model=None, server=None, tokenizer=None,
                 deployment=None, log_level="warn", startup_timeout=180, cli=None):
        """cli: a function (port, zmq_endpoint) -> the arguments after `zinfer serve`, to start the
        server from the command line alone (no config file) instead of from the sections."""
        self.cli = cli
        self.zinfer = os.path.abspath(args.zinfer)
        self.deployment = deployment or args.deployment
        self.startup_timeout = startup_timeout
        self.sections = {
            "server": {"host": HOST, "io_threads": 2},
            "model": {"path": os.path.abspath(args.model), "device": "cpu"},
            "scheduler": {},
            "cache": {},
            "tokenizer": {"workers": 1},
            "runtime": {"log_level": log_level},
        }
        if getattr(args, "kv_cache_dtype", "auto") != "auto":
            self.sections["cache"]["kv_cache_dtype"] = args.kv_cache_dtype
        for name, extra in (("server", server), ("model", model), ("scheduler", scheduler), ("cache", cache),
                            ("tokenizer", tokenizer)):
            if extra:
                self.sections[name].update(extra)
        self.dir = tempfile.mkdtemp(prefix="zinfer-e2e-")
        self._write_config(free_port(), free_port())
        self.proc = None
        self.last_log = ""
        self.model_name = os.path.basename(os.path.abspath(args.model).rstrip("/"))

    def __enter__(self):
        # free_port() cannot reserve a port: another process may take it before the server binds.
        # Then the server exits naming the address; try again on fresh ports.
        for attempt in range(3):
            try:
                return self._start()
            except TestFailure:
                if "already in use" not in self.last_log or attempt == 2:
                    raise
                log("a port was taken before the server could bind it: trying fresh ports")
                self.dir = tempfile.mkdtemp(prefix="zinfer-e2e-")
                self._write_config(free_port(), free_port())

    def _write_config(self, port, zmq_port):
        """The config TOML in self.dir: these ports, and for launch ipc:// and shm:// paths in self.dir."""
        self.port = port
        self.zmq_port = zmq_port
        self.zmq_endpoint = f"tcp://{HOST}:{zmq_port}"
        sections = {k: dict(v) for k, v in self.sections.items()}
        sections["server"].update({"port": port, "zmq_endpoint": self.zmq_endpoint})
        if self.deployment == "launch":
            # As configs/multiproc.toml: the one-sender links on shm:// rings, the others ipc://.
            sections["endpoints"] = {a: f"shm://{self.dir}/{a}.shm" if a in ("executor", "detokenizer")
                                     else f"ipc://{self.dir}/{a}.ipc"
                                     for a in ("tokenizer", "scheduler", "executor", "detokenizer", "gateway")}
        sections = {k: v for k, v in sections.items() if v}
        self.config_path = os.path.join(self.dir, "config.toml")
        with open(self.config_path, "w") as f:
            f.write(toml_text(sections))
        self.log_path = os.path.join(self.dir, "server.log")

    def _start(self):
        if self.cli:
            command = [self.zinfer, "serve"] + [str(a) for a in self.cli(self.port, self.zmq_endpoint)]
        else:
            command = [self.zinfer, self.deployment, "--config", self.config_path]
        log(f"starting: {' '.join(command)}")
        self._log_file = open(self.log_path, "wb")
        try:
            # Its own session, so that stopping it reaches every process `launch` started.
            self.proc = subprocess.Popen(command, stdout=self._log_file, stderr=subprocess.STDOUT, cwd=self.dir,
                                         start_new_session=True, preexec_fn=_die_with_parent)
        except BaseException:
            self._log_file.close()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        try:
            self.wait_healthy(self.startup_timeout)
        except BaseException:
            self.stop(print_log=True)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop(print_log=exc_type is not None)
        return False

    def wait_healthy(self, timeout):
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure(f"zinfer {self.deployment} exited with status {self.proc.returncode} before "
                                  f"/health answered")
            try:
                status, _, body = http_request(self.port, "GET", "/health", timeout=5)
                if status == 200:
                    log(f"server healthy on port {self.port} (zmq {self.zmq_endpoint})")
                    return
                last = f"status {status}: {body[:200]!r}"
            except OSError as e:
                last = str(e)
            time.sleep(0.25)
        raise TestFailure(f"/health did not answer 200 within {timeout} s (last: {last})")

    def group_processes(self):
        """The command lines of the processes in the server's process group (itself and, for
        launch, the actor processes it started)."""
        out = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
                # Fields after the ")" that closes the command name: state, ppid, pgrp, ...
                pgrp = int(stat[stat.rindex(")") + 2:].split()[2])
                if pgrp != self.proc.pid:
                    continue
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    out.append([a.decode(errors="replace") for a in f.read().split(b"\0") if a])
            except (OSError, ValueError):
                continue  # the process ended while we looked
        return out

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, print_log=False):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                log("server ignored SIGTERM for 20 s: killing it")
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=20)
        # launch's children share the group: make sure none outlives the test.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._log_file.close()
        with open(self.log_path, "rb") as f:
            self.last_log = f.read()[-6000:].decode("utf-8", "replace")
        if print_log:
            tail = self.last_log
            log(f"---- last lines of the server log ({self.log_path}) ----\n{tail}\n---- end of server log ----")
        self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- HTTP --------------------------------------------------------------------------------------

def http_request(port, method, path, body=None, headers=None, timeout=300):
    """One request on a fresh connection; returns (status, headers dict lower-cased, body bytes)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        hdrs = dict(headers or {})
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def post_json(port, path, body, timeout=300):
    """POST a JSON body; returns (status, decoded JSON)."""
    status, headers, data = http_request(port, "POST", path, body, timeout=timeout)
    try:
        return status, json.loads(data)
    except ValueError:
        raise TestFailure(f"POST {path} answered {status} with a body that is not JSON: {data[:300]!r}")


def check_openai_error(status, body, expected_status, what):
    """OpenAI's error shape: {"error": {"message", "type", "param", "code"}} with the expected status."""
    check_equal(status, expected_status, f"{what}: HTTP status")
    check(isinstance(body, dict) and isinstance(body.get("error"), dict), f"{what}: no 'error' object in {body!r}")
    err = body["error"]
    for key in ("message", "type", "param", "code"):
        check(key in err, f"{what}: error JSON lacks '{key}': {body!r}")
    check(isinstance(err["message"], str) and err["message"], f"{what}: empty error message: {body!r}")
    check(isinstance(err["type"], str) and err["type"], f"{what}: empty error type: {body!r}")


def parse_sse(raw):
    """Splits an SSE body into its events and checks the framing: every event is one `data: ` line
    followed by a blank line, the last one is `data: [DONE]`, nothing follows it. Returns the JSON
    payloads (without [DONE])."""
    text = raw.decode("utf-8")
    check(text.endswith("data: [DONE]\n\n"), f"the stream does not end with 'data: [DONE]\\n\\n': ...{text[-200:]!r}")
    events = text.split("\n\n")
    check_equal(events[-1], "", "text after the last event")
    payloads = []
    for i, event in enumerate(events[:-1]):
        check(event.startswith("data: ") and "\n" not in event, f"SSE event {i} is not one 'data: ' line: {event!r}")
        data = event[len("data: "):]
        if data == "[DONE]":
            check_equal(i, len(events) - 2, "position of data: [DONE]")
            continue
        payloads.append(json.loads(data))
    return payloads


def stream_request(port, path, body, timeout=300):
    """POST a streaming request; checks the status and SSE headers; returns the JSON events."""
    status, headers, data = http_request(port, "POST", path, body, timeout=timeout)
    if status != 200:
        raise TestFailure(f"streaming POST {path} answered {status}: {data[:500]!r}")
    check(headers.get("content-type", "").startswith("text/event-stream"),
          f"stream content-type is {headers.get('content-type')!r}")
    check_equal(headers.get("transfer-encoding", "").lower(), "chunked", "stream transfer-encoding")
    return parse_sse(data)


# ---- /metrics ----------------------------------------------------------------------------------

def metrics(port):
    """The Prometheus text of /metrics as {name or name{labels}: value}."""
    status, headers, data = http_request(port, "GET", "/metrics", timeout=30)
    check_equal(status, 200, "/metrics status")
    out = {}
    for line in data.decode("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        out[name] = float(value)
    return out


def metric(values, name):
    check(name in values, f"/metrics has no sample '{name}' (has: {sorted(values)[:40]})")
    return values[name]


def wait_idle(port, timeout=60, require_free_blocks=True):
    """Waits until nothing runs, waits or is swapped and (by default) every KV block is free.
    Returns the last metrics; fails naming what did not settle."""
    # The gauges come from a snapshot the scheduler sends the gateway every ~100 ms: give it time to
    # be newer than whatever the caller just saw finish, so an old idle one cannot pass for now.
    time.sleep(STATS_REFRESH_S * 3)
    deadline = time.monotonic() + timeout
    while True:
        m = metrics(port)
        busy = {k: m.get(k) for k in ("zinfer_num_requests_running", "zinfer_num_requests_waiting",
                                      "zinfer_num_requests_swapped", "zinfer_gateway_requests_in_flight")
                if m.get(k, 0) != 0}
        if require_free_blocks:
            if metric(m, "zinfer_kv_cache_usage_ratio") != 0:
                busy["zinfer_kv_cache_usage_ratio"] = m["zinfer_kv_cache_usage_ratio"]
            if metric(m, "zinfer_gpu_blocks_free") != metric(m, "zinfer_gpu_blocks"):
                busy["zinfer_gpu_blocks_free"] = f"{m['zinfer_gpu_blocks_free']} of {m['zinfer_gpu_blocks']}"
        if not busy:
            return m
        if time.monotonic() > deadline:
            raise TestFailure(f"the server did not become idle within {timeout} s: {busy}")
        time.sleep(0.1)


# ---- ZeroMQ ------------------------------------------------------------------------------------

def zmq_encode(message_type, payload):
    return msgpack.packb([PROTOCOL_MAJOR, PROTOCOL_MINOR, message_type, payload], use_bin_type=True)


def zmq_decode(frame):
    envelope = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    check(isinstance(envelope, list) and len(envelope) == 4, f"not a zinfer envelope: {envelope!r}")
    return envelope[2], envelope[3]


class ZmqClient:
    """A DEALER on the gateway's ROUTER endpoint."""

    def __init__(self, endpoint):
        self.ctx = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)

    def close(self):
        self.sock.close(linger=0)

    def send(self, message_type, payload):
        self.sock.send(zmq_encode(message_type, payload))

    def send_raw(self, *frames):
        self.sock.send_multipart(list(frames))

    def recv(self, timeout_s=120):
        if not self.sock.poll(int(timeout_s * 1000), zmq.POLLIN):
            raise TestFailure(f"no ZeroMQ message within {timeout_s} s")
        return zmq_decode(self.sock.recv())

    def submit(self, request_id, prompt=None, prompt_ids=None, messages=None, model="", **sampling):
        payload = {"request_id": request_id, "model": model, "sampling": sampling}
        if prompt is not None:
            payload["prompt"] = prompt
        if prompt_ids is not None:
            payload["prompt_ids"] = prompt_ids
        if messages is not None:
            payload["messages"] = messages
            payload["is_chat"] = True
        self.send(GENERATE_REQUEST, payload)

    def collect(self, request_ids, timeout_s=300):
        """Reads until every request in request_ids is over (n = 1). Returns {id: result} where a
        result is {"token_ids", "text", "finish_reason", "prompt_tokens", "completion_tokens",
        "cached_tokens", "deltas"} or {"error": ErrorReply payload}."""
        pending = set(request_ids)
        results = {rid: {"token_ids": [], "text": "", "finish_reason": "", "deltas": 0} for rid in request_ids}
        deadline = time.monotonic() + timeout_s
        while pending:
            message_type, payload = self.recv(max(0.1, deadline - time.monotonic()))
            rid = payload.get("request_id")
            if rid not in pending:
                continue
            if message_type == ERROR_REPLY:
                results[rid] = {"error": payload}
                pending.discard(rid)
                continue
            check_equal(message_type, TEXT_DELTA, f"message type for request {rid}")
            r = results[rid]
            r["deltas"] += 1
            r["token_ids"].extend(payload.get("token_ids", []))
            r["text"] += payload.get("text", "")
            for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
                r[key] = payload.get(key, 0)
            if payload.get("finish_reason"):
                r["finish_reason"] = payload["finish_reason"]
                pending.discard(rid)
        return results

    def stats(self, seq=1):
        self.send(STATS_REQUEST, {"seq": seq})
        while True:
            message_type, payload = self.recv(30)
            if message_type == STATS:
                return payload
            check(message_type != ERROR_REPLY, f"StatsRequest answered with an error: {payload!r}")


# ---- zinfer generate ---------------------------------------------------------------------------

def generate(args, max_tokens, prompt=None, prompt_ids=None, chat=False, extra=None):
    """`zinfer generate ... --temperature 0 --ignore-eos --json`: the reference greedy output."""
    command = [args.zinfer, "generate", "--model", os.path.abspath(args.model), "--max-tokens", str(max_tokens),
               "--temperature", "0", "--ignore-eos", "--json"]
    if prompt_ids is not None:
        command += ["--prompt-ids", ",".join(str(i) for i in prompt_ids)]
    else:
        command += ["--prompt", prompt]
    if chat:
        command.append("--chat")
    command += extra or []
    done = subprocess.run(command, capture_output=True, timeout=300)
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace")[-2000:]
        raise TestFailure(f"{' '.join(command)} exited {done.returncode}: {stderr}")
    return json.loads(done.stdout)
