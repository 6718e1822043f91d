"""e2e: supervision under `zinfer launch` (issue 21). One case per run (--case):

- kill ACTOR: kill -9 of one actor with 3 HTTP streams, 1 non-streaming request and 2 ZeroMQ
  streams in flight: each ends with an error (an SSE error event and [DONE] or a 503 in OpenAI's
  error shape, an ErrorReply 503 "actor_restarted"; for the gateway, whose clients' connections die
  with it, a closed connection), the launcher restarts the actor (and, for the scheduler, the
  executor and detokenizer that hold its state), a new request is served within 10 s of the restart
  plus its load time, and no KV block stays in use.
- stop ACTOR: SIGSTOP for longer than the heartbeat timeout: /health turns 503, the stalled process
  is killed and replaced, /health turns 200 and requests are served again.
- launcher: a second launch on the same paths refuses to start and leaves the first serving; after
  kill -9 of the launcher every actor process exits."""

# Invariant 38 (docs/architecture.md): a dead or stalled actor is restarted, and what it held ends
# with an error.

import os
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (ERROR_REPLY, TEXT_DELTA, Server, TestFailure, ZmqClient, check, check_equal,  # noqa: E402
                        check_openai_error, http_request, log, main_wrapper, metric, metrics, parse_args,
                        parse_sse, post_json, wait_idle)
import argparse  # noqa: E402
import json  # noqa: E402
import zmq  # noqa: E402

HEARTBEAT_TIMEOUT_S = 1.0
PROMPT = "Tell me a very long story about a dragon who"
LONG = 30000  # tokens: still running when the actor dies
RECOVERY_S = 10  # a new request is served within this long after the restart plus the load time


def start_server(args):
    server = Server(args, deployment="launch", server={"shutdown_grace_s": 2}, log_level="info")
    server.sections["runtime"]["heartbeat_timeout_s"] = HEARTBEAT_TIMEOUT_S
    server._write_config(server.port, server.zmq_port)
    return server


def actor_pids(server):
    """{actor name: pid} of the processes `zinfer actor NAME` in the server's process group."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != server.proc.pid or fields[0] == "Z":
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except (OSError, ValueError):
            continue
        if len(argv) >= 3 and argv[1] == "actor":
            out[argv[2]] = int(pid)
    return out


def process_exists(pid):
    """True while `pid` is a process that has not ended (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


def wait_for(what, predicate, timeout_s, interval_s=0.02):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TestFailure(f"{what}: not within {timeout_s} s")
        time.sleep(interval_s)


def health(server):
    try:
        return http_request(server.port, "GET", "/health", timeout=2)[0]
    except OSError:
        return None


def serves_a_request(server):
    try:
        status, body = post_json(server.port, "/v1/completions",
                                 {"prompt": "hello", "max_tokens": 4, "temperature": 0, "ignore_eos": True},
                                 timeout=RECOVERY_S)
    except (OSError, TestFailure):
        return False
    return status == 200 and body["choices"][0]["finish_reason"] == "length"


class InFlight:
    """3 HTTP streams, 1 non-streaming request and 2 ZeroMQ streams, each asking for LONG tokens."""

    def __init__(self, server):
        self.server = server
        self.results = {}
        self.threads = []
        for key, stream in (("s1", True), ("s2", True), ("s3", True), ("plain", False)):
            t = threading.Thread(target=self._http, args=(key, stream), daemon=True)
            t.start()
            self.threads.append(t)
        self.zc = ZmqClient(server.zmq_endpoint)
        self.monitor = self.zc.sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        for rid in (71, 72):
            self.zc.submit(rid, prompt=PROMPT, max_tokens=LONG, temperature=0.0, ignore_eos=True)

    def _http(self, key, stream):
        try:
            self.results[key] = http_request(self.server.port, "POST", "/v1/completions",
                                             {"prompt": PROMPT, "max_tokens": LONG, "temperature": 0,
                                              "ignore_eos": True, "stream": stream}, timeout=120)
        except Exception as e:  # noqa: BLE001 - a connection that dies is one of the outcomes
            self.results[key] = e

    def wait_running(self):
        wait_for("the six requests running", lambda: metric(metrics(self.server.port), "zinfer_num_requests_running") >= 6,
                 60, 0.05)
        # A few tokens each, so that the streams have had their 200.
        time.sleep(0.3)

    def check_http_errors(self, connection_may_die):
        for t in self.threads:
            t.join(60)
            check(not t.is_alive(), "an HTTP request did not end within 60 s of the kill")
        for key in ("s1", "s2", "s3", "plain"):
            r = self.results[key]
            if isinstance(r, Exception):
                check(connection_may_die, f"request {key} failed with {r!r} instead of an error from the server")
                log(f"{key}: the connection died ({type(r).__name__})")
                continue
            status, headers, raw = r
            if status == 200 and key != "plain":
                events = parse_sse(raw)  # ends with [DONE]
                check("error" in events[-1], f"stream {key} ended without an error event: {events[-1]!r}")
                check_equal(events[-1]["error"]["code"], 503, f"stream {key}'s error code")
                log(f"{key}: SSE error event then [DONE] after {len(events) - 1} events")
            else:
                check_openai_error(status, json.loads(raw), 503, f"request {key}")
                log(f"{key}: {status} {json.loads(raw)['error']['message']!r}")

    def check_zmq_errors(self, connection_may_die):
        if connection_may_die:
            # The gateway's clients lose their connection with it: a ZeroMQ client sees it go.
            check(self.monitor.poll(10000), "the ZeroMQ client saw no disconnect from the killed gateway")
            log("zmq: the client saw the gateway's connection drop")
            return
        got = {}
        deadline = time.monotonic() + 30
        while len(got) < 2:
            check(time.monotonic() < deadline, f"ZeroMQ requests without an ending 30 s after the kill: {got}")
            message_type, payload = self.zc.recv(max(0.1, deadline - time.monotonic()))
            rid = payload.get("request_id")
            if message_type == ERROR_REPLY:
                got[rid] = payload
            elif message_type == TEXT_DELTA:
                check(not payload.get("finish_reason"), f"ZeroMQ request {rid} finished normally: {payload!r}")
        for rid, reply in got.items():
            check_equal((reply["code"], reply["kind"]), (503, "actor_restarted"), f"ZeroMQ request {rid}'s ErrorReply")
        log("zmq: both requests got ErrorReply 503 actor_restarted")

    def close(self):
        self.monitor.close(linger=0)
        self.zc.close()


def restarted(server, before, names):
    now = actor_pids(server)
    return all(n in now and now[n] != before[n] for n in names)


def case_kill(args, actor):
    with start_server(args) as server:
        before = actor_pids(server)
        check_equal(sorted(before), sorted(["executor", "detokenizer", "scheduler", "tokenizer", "gateway"]),
                    "the actor processes")
        flight = InFlight(server)
        flight.wait_running()
        log(f"kill -9 {actor} (pid {before[actor]})")
        killed = time.monotonic()
        os.kill(before[actor], signal.SIGKILL)
        group = [actor] + (["executor", "detokenizer"] if actor == "scheduler" else [])
        flight.check_http_errors(connection_may_die=actor == "gateway")
        flight.check_zmq_errors(connection_may_die=actor == "gateway")
        errors_after = time.monotonic() - killed
        wait_for(f"{group} restarted", lambda: restarted(server, before, group), 30)
        others = [n for n in before if n not in group]
        now = actor_pids(server)
        check(all(now[n] == before[n] for n in others), f"actors other than {group} were restarted: {before} -> {now}")
        wait_for("a request served after the restart", lambda: serves_a_request(server), RECOVERY_S + 20, 0.1)
        recovered = time.monotonic() - killed
        wait_for("/health 200 after the restart", lambda: health(server) == 200, 10, 0.05)
        flight.close()
        m = wait_idle(server.port, timeout=30)  # every KV block free again
        log(f"RESULT kill {actor}: every request ended with an error within {errors_after:.2f} s; a new request "
            f"was served {recovered:.2f} s after the kill; {int(metric(m, 'zinfer_gpu_blocks_free'))} of "
            f"{int(metric(m, 'zinfer_gpu_blocks'))} blocks free")


def case_stop(args, actor):
    with start_server(args) as server:
        before = actor_pids(server)
        log(f"SIGSTOP {actor} (pid {before[actor]})")
        stopped = time.monotonic()
        os.kill(before[actor], signal.SIGSTOP)
        try:
            wait_for("/health 503 while the actor is stalled", lambda: health(server) == 503,
                     HEARTBEAT_TIMEOUT_S + 10, 0.01)
            unhealthy = time.monotonic() - stopped
            wait_for(f"{actor} replaced", lambda: restarted(server, before, [actor]), 30)
            check(not process_exists(before[actor]), "the stalled process still exists")
        finally:
            try:
                os.kill(before[actor], signal.SIGCONT)
            except ProcessLookupError:
                pass
        wait_for("/health 200 after the replacement", lambda: health(server) == 200, 30, 0.05)
        wait_for("a request served after the replacement", lambda: serves_a_request(server), RECOVERY_S + 20, 0.1)
        recovered = time.monotonic() - stopped
        log(f"RESULT stop {actor}: /health 503 {unhealthy:.2f} s after SIGSTOP (timeout {HEARTBEAT_TIMEOUT_S} s); "
            f"served again {recovered:.2f} s after it")


def case_launcher(args):
    with start_server(args) as server:
        pids = actor_pids(server)
        log("a second launch on the same config")
        second = subprocess.run([server.zinfer, "launch", "--config", server.config_path], capture_output=True,
                                timeout=60, cwd=server.dir)
        text = (second.stdout + second.stderr).decode(errors="replace")
        check(second.returncode != 0, f"the second launch did not refuse: {text[-1000:]}")
        check("locked by another zinfer launch" in text, f"the second launch's refusal does not say why: {text[-1000:]}")
        check_equal(actor_pids(server), pids, "the first deployment's actors after the second launch")
        check(serves_a_request(server), "the first deployment stopped serving after the second launch")
        log("kill -9 of the launcher")
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(10)
        killed = time.monotonic()
        wait_for("every actor process gone after the launcher's death",
                 lambda: not any(process_exists(pid) for pid in pids.values()), 20, 0.05)
        log(f"RESULT launcher: every actor exited {time.monotonic() - killed:.2f} s after kill -9 of the launcher")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", choices=["kill", "stop", "launcher"], required=True)
    p.add_argument("--actor", default="executor",
                   choices=["executor", "detokenizer", "scheduler", "tokenizer", "gateway"])
    own, rest = p.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    args = parse_args(__doc__)
    if own.case == "kill":
        body = lambda: case_kill(args, own.actor)  # noqa: E731
    elif own.case == "stop":
        body = lambda: case_stop(args, own.actor)  # noqa: E731
    else:
        body = lambda: case_launcher(args)  # noqa: E731
    main_wrapper(body, args.timeout)


if __name__ == "__main__":
    main()
