#!/usr/bin/python3
"""A minimal external scheduler for zinfer, speaking the scheduler protocol 1.0
(docs/scheduler-protocol.md) with Debian's python3-zmq and python3-msgpack.

    /usr/bin/python3 examples/python/scheduler.py --config my.toml [--verbose]

The config is the one `zinfer serve` runs with: its [endpoints] must be ipc:// or tcp:// and its
[runtime].actors must leave out "scheduler", so that this process binds the scheduler endpoint
in its place. [scheduler].max_num_seqs and max_num_batched_tokens bound each step.

What it does, on purpose no more:
  - first come, first served: sequences run in arrival order; a prompt longer than the token
    budget is split into chunks over several steps, nothing else is chunked;
  - one plan in flight: the next step is planned when the previous result is back, so every
    token fed to the executor is known here and `use_last_sampled` is never needed;
  - KV blocks from a free list, reserved in full at admission (prompt + max_tokens), so a running
    sequence never runs out of blocks and nothing is ever preempted; the waiting head blocks the
    queue until enough blocks are free;
  - n > 1 samples are independent sequences (each computes the prompt; no block sharing);
  - sampling settings are passed through to the executor; stop on eos (unless ignore_eos), stop
    token ids, max_tokens or the context length; Abort at any moment, for one sample or all.
Exit status: 0 after SIGINT/SIGTERM, 1 when the executor fails or breaks the protocol.
"""

import argparse
import collections
import signal
import sys
import time
import tomllib

import msgpack
import zmq

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 0

# Message types (protocol/messages.h).
ERROR_REPLY = 3
TOKENIZED_REQUEST = 11
ABORT = 12
REQUEST_START = 13
TOKEN_DELTA = 14
STEP_PLAN = 20
STEP_RESULT = 21
EXECUTOR_INFO_REQUEST = 22
EXECUTOR_INFO = 23
STATS = 31

STATS_PERIOD_S = 0.1  # the gateway calls the pipeline unhealthy after 5 s without Stats
EARLY_ABORT_TTL_S = 60.0


# The step path's per-sequence records are msgpack arrays with the fields in this order
# (protocol/messages.h); everything else is a map with named fields.
SEQ_WORK_FIELDS = ["seq_id", "token_ids", "use_last_sampled", "num_tokens", "start_pos", "block_table",
                   "sample", "temperature", "top_p", "top_k", "seed", "sample_index", "top_logprobs"]
SEQ_OUTPUT_FIELDS = ["seq_id", "token", "logprob", "top_logprobs"]
TOKEN_DELTA_FIELDS = ["request_id", "index", "token_ids", "logprobs", "top_logprobs", "finish_reason",
                      "prompt_tokens", "completion_tokens", "cached_tokens"]
TOKEN_DELTA_DEFAULTS = {"logprobs": [], "top_logprobs": [], "finish_reason": "", "prompt_tokens": 0,
                        "completion_tokens": 0, "cached_tokens": 0}


def as_array(record, fields, defaults=None):
    defaults = defaults or {}
    return [record[f] if f in record else defaults[f] for f in fields]


def as_record(values, fields):
    return dict(zip(fields, values))


def encode(message_type, payload):
    """The envelope: [major, minor, type, payload map]."""
    return msgpack.packb([PROTOCOL_MAJOR, PROTOCOL_MINOR, message_type, payload], use_bin_type=True)


def decode(frame):
    envelope = msgpack.unpackb(frame, raw=False, unicode_errors="replace", strict_map_key=False)
    if not isinstance(envelope, list) or len(envelope) != 4 or not isinstance(envelope[3], dict):
        raise ValueError("not a zinfer envelope")
    major, _minor, message_type, payload = envelope
    if major > PROTOCOL_MAJOR:
        raise ValueError(f"peer speaks protocol {major}.x, this scheduler {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}")
    return message_type, payload


def log(*parts):
    print("[scheduler.py]", *parts, file=sys.stderr, flush=True)


class BlockPool:
    """The device KV blocks: which are free. Block ids are 0 .. num_blocks-1."""

    def __init__(self, num_blocks):
        self.num_blocks = num_blocks
        self.free_ids = list(range(num_blocks - 1, -1, -1))  # pop() hands out low ids first

    def allocate(self, count):
        if count > len(self.free_ids):
            return None
        return [self.free_ids.pop() for _ in range(count)]

    def release(self, blocks):
        self.free_ids.extend(reversed(blocks))


class Request:
    def __init__(self, msg):
        self.request_id = msg["request_id"]
        self.prompt = list(msg.get("prompt_ids", []))
        self.sampling = msg.get("sampling", {})
        self.sequences = []

    def param(self, name, default):
        return self.sampling.get(name, default)


class Sequence:
    def __init__(self, seq_id, request, index):
        self.seq_id = seq_id
        self.request = request
        self.index = index
        self.tokens = list(request.prompt)  # prompt + generated tokens
        self.num_computed = 0               # positions whose KV the executor has written
        self.blocks = []
        self.planned = False                # the executor may hold state for it
        self.finished = False

    def num_outputs(self):
        return len(self.tokens) - len(self.request.prompt)


class Scheduler:
    """The decisions, without sockets. Each method returns the messages to send as a list of
    (destination, type, payload), destination "detokenizer" or "gateway", in sending order."""

    def __init__(self, info, max_num_seqs, max_num_batched_tokens, verbose=False):
        self.verbose = verbose
        self.block_size = info["block_size"]
        self.max_model_len = info["max_model_len"]
        self.eos_token_ids = set(info.get("eos_token_ids", []))
        self.pool = BlockPool(info["num_gpu_blocks"])
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.requests = {}
        self.waiting = collections.deque()
        self.running = []
        self.in_flight = None               # (step_id, [(sequence, sample)]) of the plan out
        self.finished_for_executor = []
        self.early_aborts = {}              # request id -> time the Abort came before the request
        self.next_seq_id = 1
        self.next_step_id = 1
        self.counters = collections.Counter()

    # ---- requests in -----------------------------------------------------------------------

    def blocks_for(self, request):
        longest = min(len(request.prompt) + request.param("max_tokens", 16), self.max_model_len)
        return -(-longest // self.block_size)

    def add_request(self, msg):
        request = Request(msg)
        rid, n, max_tokens = request.request_id, request.param("n", 1), request.param("max_tokens", 16)
        problem = None
        if rid in self.requests:
            problem = (400, "duplicate_request", "is already queued")
        elif not request.prompt:
            problem = (400, "invalid_request", "has an empty prompt")
        elif n < 1 or max_tokens < 1:
            problem = (400, "invalid_request", f"needs n >= 1 and max_tokens >= 1, got {n} and {max_tokens}")
        elif len(request.prompt) >= self.max_model_len:
            problem = (400, "context_length_exceeded",
                       f"has {len(request.prompt)} prompt tokens, max_model_len is {self.max_model_len}")
        elif self.blocks_for(request) > self.pool.num_blocks:
            problem = (413, "kv_capacity_exceeded",
                       f"needs {self.blocks_for(request)} KV blocks, the pool has {self.pool.num_blocks}")
        if problem:
            # Only the gateway hears of it: the detokenizer holds no state for a request it never
            # saw, and a lone ErrorReply gives the client one clear answer (this status code).
            code, kind, text = problem
            return [("gateway", ERROR_REPLY, {"request_id": rid, "code": code, "kind": kind,
                                              "message": f"request {rid} {text}"})]
        out = [("detokenizer", REQUEST_START, {
            "request_id": rid, "n": n, "prompt_tokens": len(request.prompt),
            "stop": request.param("stop", []), "skip_special_tokens": request.param("skip_special_tokens", True),
            "logprobs": request.param("logprobs", False),
            "stop_token_ids": request.param("stop_token_ids", []),
            "include_stop_str_in_output": request.param("include_stop_str_in_output", False)})]
        self.requests[rid] = request
        self.counters["prompt_tokens"] += len(request.prompt)
        for index in range(n):
            seq = Sequence(self.next_seq_id, request, index)
            self.next_seq_id += 1
            request.sequences.append(seq)
            self.waiting.append(seq)
        if self.early_aborts.pop(rid, None) is not None:
            out += self.abort(rid, "abort", -1)
        return out

    def abort(self, request_id, reason, index):
        request = self.requests.get(request_id)
        if request is None:
            # The client may have left while its request was being tokenized: remember the Abort.
            # A "stop" comes from the detokenizer about a request it has seen, never early.
            if reason != "stop":
                self.early_aborts[request_id] = time.monotonic()
            return []
        if self.verbose:
            log(f"request {request_id}: Abort ({reason or 'abort'}, index {index})")
        out = []
        for seq in request.sequences:
            if not seq.finished and index in (-1, seq.index):
                self.retire(seq)
                out.append(("detokenizer", TOKEN_DELTA,
                            self.delta_fields(request, seq.index, seq.num_outputs(), reason or "abort")))
        self.forget_if_done(request)
        return out

    def prune_early_aborts(self):
        cutoff = time.monotonic() - EARLY_ABORT_TTL_S
        self.early_aborts = {rid: t for rid, t in self.early_aborts.items() if t >= cutoff}

    # ---- steps -----------------------------------------------------------------------------

    def plan(self):
        """The next StepPlan, or None while a plan is in flight or there is nothing to do."""
        if self.in_flight is not None:
            return None
        budget, works, record = self.max_num_batched_tokens, [], []
        for seq in self.running:  # arrival order: decodes and unfinished prompt chunks alike
            if budget <= 0 or len(works) >= self.max_num_seqs:
                break
            budget -= self.emit(seq, budget, works, record)
        while self.waiting and budget > 0 and len(works) < self.max_num_seqs:
            seq = self.waiting[0]
            blocks = self.pool.allocate(self.blocks_for(seq.request))
            if blocks is None:
                break  # first come, first served: nobody overtakes the head of the queue
            self.waiting.popleft()
            seq.blocks = blocks
            self.running.append(seq)
            budget -= self.emit(seq, budget, works, record)
        if not works and not self.finished_for_executor:
            return None
        step_id = self.next_step_id
        self.next_step_id += 1
        self.counters["steps"] += 1
        self.in_flight = (step_id, record)
        plan = {"step_id": step_id, "seqs": works, "swap_out": [], "swap_in": [], "copy": [],
                "finished": self.finished_for_executor}
        self.finished_for_executor = []
        return plan

    def emit(self, seq, budget, works, record):
        """Adds the sequence's next chunk (at most `budget` tokens) to the plan; returns its size."""
        start = seq.num_computed
        count = min(len(seq.tokens) - start, budget)
        sampling = seq.request.sampling
        seed = sampling.get("seed", -1)
        sample = start + count == len(seq.tokens)  # the chunk ends at the last known token
        works.append({
            "seq_id": seq.seq_id,
            "token_ids": seq.tokens[start:start + count],
            "use_last_sampled": False,
            "num_tokens": count,
            "start_pos": start,
            "block_table": seq.blocks,
            "sample": sample,
            "temperature": float(sampling.get("temperature", 1.0)),
            "top_p": float(sampling.get("top_p", 1.0)),
            "top_k": sampling.get("top_k", -1),
            "seed": seed + seq.index if seed >= 0 else -1,  # samples of one request differ
            "sample_index": seq.num_outputs(),
            "top_logprobs": sampling.get("top_logprobs", 0) if sampling.get("logprobs", False) else 0,
        })
        record.append((seq, sample))
        seq.num_computed += count
        seq.planned = True
        return count

    def on_result(self, result):
        step_id, record = self.in_flight
        if result.get("step_id") != step_id:
            raise RuntimeError(f"StepResult for step {result.get('step_id')}, expected step {step_id}")
        self.in_flight = None
        out = []
        if result.get("error"):
            failed = {seq.request.request_id: seq.request for seq, _ in record}
            for rid, request in failed.items():
                out += self.abort(rid, "error", -1)
                out.append(("gateway", ERROR_REPLY, {"request_id": rid, "code": 500, "kind": "executor_error",
                                                     "message": f"step {step_id} failed: {result['error']}"}))
            return out
        outputs = iter(result.get("outputs", []))
        sampled = [seq for seq, sample in record if sample]
        if len(sampled) != len(result.get("outputs", [])):
            raise RuntimeError(f"step {step_id}: {len(result.get('outputs', []))} outputs for {len(sampled)} samples")
        for seq in sampled:
            o = next(outputs)
            if o.get("seq_id") != seq.seq_id:
                raise RuntimeError(f"step {step_id}: output for sequence {o.get('seq_id')}, expected {seq.seq_id}")
            if seq.finished:
                continue  # aborted while the step ran: the token is dropped
            out.append(("detokenizer", TOKEN_DELTA, self.accept_token(seq, o)))
        return out

    def accept_token(self, seq, o):
        request, token = seq.request, o["token"]
        seq.tokens.append(token)
        self.counters["generation_tokens"] += 1
        n_out = seq.num_outputs()
        reason = ""
        if n_out >= request.param("min_tokens", 0) and (
                (token in self.eos_token_ids and not request.param("ignore_eos", False))
                or token in request.param("stop_token_ids", [])):
            reason = "stop"
        elif n_out >= request.param("max_tokens", 16) or len(seq.tokens) >= self.max_model_len:
            reason = "length"
        delta = self.delta_fields(request, seq.index, n_out, reason)
        delta["token_ids"] = [token]
        if request.param("logprobs", False):
            delta["logprobs"] = [o.get("logprob", 0.0)]
            if request.param("top_logprobs", 0) > 0:
                delta["top_logprobs"] = [o.get("top_logprobs", [])]
        if reason:
            self.retire(seq)
            self.forget_if_done(request)
        return delta

    # ---- bookkeeping -----------------------------------------------------------------------

    @staticmethod
    def delta_fields(request, index, completion_tokens, reason):
        return {"request_id": request.request_id, "index": index, "token_ids": [], "finish_reason": reason,
                "prompt_tokens": len(request.prompt), "completion_tokens": completion_tokens, "cached_tokens": 0}

    def retire(self, seq):
        seq.finished = True
        self.pool.release(seq.blocks)
        seq.blocks = []
        if seq in self.running:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        if seq.planned:
            self.finished_for_executor.append(seq.seq_id)

    def forget_if_done(self, request):
        if all(seq.finished for seq in request.sequences):
            self.requests.pop(request.request_id, None)

    def stats(self):
        free = len(self.pool.free_ids)
        total = self.pool.num_blocks
        return {"running": len(self.running), "waiting": len(self.waiting), "swapped": 0,
                "kv_usage": (total - free) / total if total else 0.0, "prefix_hit_rate": 0.0,
                "num_preemptions": 0, "prompt_tokens": self.counters["prompt_tokens"],
                "generation_tokens": self.counters["generation_tokens"], "steps": self.counters["steps"],
                "num_gpu_blocks": total, "free_gpu_blocks": free, "num_cpu_blocks": 0, "free_cpu_blocks": 0}


class Stopping:
    """SIGINT/SIGTERM end the loop at its next turn (it wakes at least every STATS_PERIOD_S)."""

    def __init__(self):
        self.requested = False
        signal.signal(signal.SIGINT, self.request)
        signal.signal(signal.SIGTERM, self.request)

    def request(self, _signum, _frame):
        self.requested = True


def load_settings(path):
    with open(path, "rb") as f:
        config = tomllib.load(f)
    endpoints = {"scheduler": "inproc://zinfer-scheduler", "executor": "inproc://zinfer-executor",
                 "detokenizer": "inproc://zinfer-detokenizer", "gateway": "inproc://zinfer-gateway"}
    endpoints.update({k: v for k, v in config.get("endpoints", {}).items() if k in endpoints})
    for name, endpoint in endpoints.items():
        if endpoint.startswith("inproc://"):
            raise SystemExit(f"{path}: [endpoints].{name} is {endpoint}; another process needs ipc:// or tcp://")
    limits = config.get("scheduler", {})
    return endpoints, limits.get("max_num_seqs", 256), limits.get("max_num_batched_tokens", 2048)


def fetch_executor_info(executor, stopping, timeout_s):
    """ExecutorInfo, asked once; the executor answers when its model is loaded."""
    executor.send(encode(EXECUTOR_INFO_REQUEST, {"seq": 1}))
    deadline = time.monotonic() + timeout_s
    while not stopping.requested and time.monotonic() < deadline:
        if executor.poll(int(STATS_PERIOD_S * 1000)):
            message_type, payload = decode(executor.recv())
            if message_type == EXECUTOR_INFO:
                if payload.get("error"):
                    raise RuntimeError(f"the executor failed: {payload['error']}")
                return payload
            raise RuntimeError(f"the executor answered message type {message_type}: {payload}")
    return None


def run(args):
    endpoints, max_num_seqs, max_num_batched_tokens = load_settings(args.config)
    stopping = Stopping()
    ctx = zmq.Context()
    sockets = {}

    def socket(name, kind, endpoint, bind):
        s = ctx.socket(kind)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDHWM, 100000)  # as the built-in actors: a full queue blocks, never drops
        s.setsockopt(zmq.RCVHWM, 100000)
        if bind:
            s.bind(endpoint)
        else:
            s.connect(endpoint)
        sockets[name] = s
        return s

    inbox = socket("inbox", zmq.PULL, endpoints["scheduler"], bind=True)
    executor = socket("executor", zmq.DEALER, endpoints["executor"], bind=False)
    socket("detokenizer", zmq.PUSH, endpoints["detokenizer"], bind=False)
    socket("gateway", zmq.PUSH, endpoints["gateway"], bind=False)

    try:
        info = fetch_executor_info(executor, stopping, args.startup_timeout)
        if info is None:
            log("stopped before the executor answered")
            return 0 if stopping.requested else 1
        log(f"{info['backend']} executor: {info['num_gpu_blocks']} blocks of {info['block_size']} tokens, "
            f"max_model_len {info['max_model_len']}; ready on {endpoints['scheduler']}")
        core = Scheduler(info, max_num_seqs, max_num_batched_tokens, args.verbose)

        def send_all(messages):
            for destination, message_type, payload in messages:
                if message_type == TOKEN_DELTA:
                    payload = as_array(payload, TOKEN_DELTA_FIELDS, TOKEN_DELTA_DEFAULTS)
                sockets[destination].send(encode(message_type, payload))

        poller = zmq.Poller()
        poller.register(inbox, zmq.POLLIN)
        poller.register(executor, zmq.POLLIN)
        next_stats = 0.0
        while not stopping.requested:
            ready = dict(poller.poll(int(STATS_PERIOD_S * 1000)))
            for _ in range(1024 if inbox in ready else 0):  # bounded: results are not starved
                if not inbox.poll(0):
                    break
                try:
                    message_type, payload = decode(inbox.recv())
                    if message_type == TOKENIZED_REQUEST:
                        send_all(core.add_request(payload))
                    elif message_type == ABORT:
                        send_all(core.abort(payload.get("request_id", 0), payload.get("reason", "abort"),
                                            payload.get("index", -1)))
                    else:
                        log("ignoring message type", message_type)
                except (ValueError, TypeError, KeyError, msgpack.UnpackException) as e:
                    log("bad frame:", repr(e))
            while executor in ready and executor.poll(0):
                message_type, payload = decode(executor.recv())
                if message_type == STEP_RESULT:
                    payload["outputs"] = [as_record(o, SEQ_OUTPUT_FIELDS) for o in payload.get("outputs", [])]
                    send_all(core.on_result(payload))
                elif message_type == ERROR_REPLY and core.in_flight is not None:
                    # The executor could not read the plan: the step failed as a whole.
                    send_all(core.on_result({"step_id": core.in_flight[0], "error": payload.get("message", "?")}))
                else:
                    log("ignoring message type", message_type, "from the executor")
            plan = core.plan()
            if plan is not None:
                if args.verbose:
                    log(f"step {plan['step_id']}: {len(plan['seqs'])} sequences, "
                        f"{sum(w['num_tokens'] for w in plan['seqs'])} tokens")
                plan = dict(plan, seqs=[as_array(w, SEQ_WORK_FIELDS) for w in plan["seqs"]])
                executor.send(encode(STEP_PLAN, plan))
            if time.monotonic() >= next_stats:
                next_stats = time.monotonic() + STATS_PERIOD_S
                try:
                    sockets["gateway"].send(encode(STATS, core.stats()), zmq.NOBLOCK)
                except zmq.Again:
                    pass  # statistics are dropped, never waited for
                core.prune_early_aborts()
        return 0
    finally:
        for s in sockets.values():
            s.close()
        ctx.term()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the zinfer TOML config (ipc:// or tcp:// endpoints)")
    parser.add_argument("--startup-timeout", type=float, default=600.0, help="seconds to wait for ExecutorInfo")
    parser.add_argument("--verbose", action="store_true", help="log every step")
    args = parser.parse_args()
    try:
        return run(args)
    except (RuntimeError, ValueError) as e:
        log("error:", e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
