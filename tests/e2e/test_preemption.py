"""e2e 3: with a KV pool far too small for the load, greedy (and seeded) outputs are identical to
those of a run with a large pool, for preemption = "recompute" and "swap"; afterwards /metrics shows
preemptions > 0, nothing running, waiting or swapped, and every block back in the pool."""

import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, ZmqClient, check, check_equal, log, main_wrapper, metric, metrics,  # noqa: E402
                        parse_args, post_json, wait_idle)

LOGPROB_TOLERANCE = 1e-3
NUM_REQUESTS = 12
MAX_TOKENS = 48
BLOCK_SIZE = 16
# Each request: a ~30-token prompt + 48 tokens = 5 blocks; 12 of them at once want ~60 blocks.
# 16 blocks hold any one request (so none is refused) but only three at a time.
SMALL_POOL_BLOCKS = 16
NUM_CPU_BLOCKS = 256


def prompt_of(i):
    return (f"Request number {i} asks the model to continue this sentence about the river, the hills "
            f"and the {i * 3} small boats that sail to the harbour every morning")


def run_load(port):
    """All requests at once; returns ({i: (token ids, logprobs)}, the most requests seen swapped out
    at once while they ran)."""
    results = {}

    def one(i):
        try:
            request = {"prompt": prompt_of(i), "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True,
                       "return_token_ids": True, "logprobs": 1}
            if i % 3 == 2:
                # Seeded sampling too: a request's generator must not depend on memory pressure.
                request.update({"temperature": 0.8, "seed": 1000 + i})
            status, body = post_json(port, "/v1/completions", request, timeout=600)
            check_equal(status, 200, f"request {i}: {body!r}")
            choice = body["choices"][0]
            check_equal(choice["finish_reason"], "length", f"request {i} finish_reason")
            check_equal(body["usage"]["completion_tokens"], MAX_TOKENS, f"request {i} completion_tokens")
            results[i] = (choice["token_ids"], choice["logprobs"]["token_logprobs"])
        except Exception as e:  # noqa: BLE001 - reported below
            results[i] = e

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(NUM_REQUESTS)]
    for t in threads:
        t.start()
    # Watch the swapped gauge while the load runs: it tells whether the swap path was taken.
    most_swapped = 0
    deadline = time.monotonic() + 600
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        most_swapped = max(most_swapped, metrics(port).get("zinfer_num_requests_swapped", 0))
        time.sleep(0.02)
    for t in threads:
        t.join(timeout=1)
    check(not any(t.is_alive() for t in threads), "requests did not finish within 600 s")
    failures = {i: r for i, r in results.items() if isinstance(r, Exception)}
    check(not failures, f"failed requests: {failures}")
    return results, most_swapped


def run_with_pool(args, preemption, num_gpu_blocks):
    cache = {"block_size": BLOCK_SIZE, "num_cpu_blocks": NUM_CPU_BLOCKS}
    if num_gpu_blocks:
        cache["num_gpu_blocks"] = num_gpu_blocks
    with Server(args, scheduler={"preemption": preemption}, cache=cache) as server:
        outputs, most_swapped = run_load(server.port)
        m = wait_idle(server.port)
        if num_gpu_blocks:
            check_equal(metric(m, "zinfer_gpu_blocks"), float(num_gpu_blocks), "zinfer_gpu_blocks")
        # Host (swap) blocks are not in /metrics; the ZeroMQ Stats reply has them.
        zc = ZmqClient(server.zmq_endpoint)
        try:
            stats = zc.stats()
        finally:
            zc.close()
        check_equal(stats["num_cpu_blocks"], NUM_CPU_BLOCKS, "Stats.num_cpu_blocks")
        check_equal(stats["free_cpu_blocks"], NUM_CPU_BLOCKS, "Stats.free_cpu_blocks after the load")
        check_equal(stats["free_gpu_blocks"], stats["num_gpu_blocks"], "Stats.free_gpu_blocks after the load")
        check(server.alive(), "the server is still running")
        return outputs, most_swapped, m


def body(args):
    reference, _, ref_metrics = run_with_pool(args, "recompute", 0)
    log(f"large pool ({ref_metrics['zinfer_gpu_blocks']:.0f} blocks): "
        f"{ref_metrics['zinfer_num_preemptions_total']:.0f} preemptions")
    for preemption in ("recompute", "swap"):
        outputs, most_swapped, m = run_with_pool(args, preemption, SMALL_POOL_BLOCKS)
        preemptions = metric(m, "zinfer_num_preemptions_total")
        log(f"{preemption}, {SMALL_POOL_BLOCKS} blocks: {preemptions:.0f} preemptions, at most {most_swapped:.0f} "
            f"requests swapped out at once; all blocks free afterwards")
        if preemption == "swap":
            check(most_swapped > 0, "swap: no request was ever seen swapped out (zinfer_num_requests_swapped)")
        else:
            check_equal(most_swapped, 0, "recompute: requests seen swapped out")
        check(preemptions > 0, f"{preemption}: no preemption with {SMALL_POOL_BLOCKS} blocks for "
                               f"{NUM_REQUESTS} requests of ~5 blocks each")
        for i in range(NUM_REQUESTS):
            (ids, logprobs), (ref_ids, ref_logprobs) = outputs[i], reference[i]
            kind = "seeded" if i % 3 == 2 else "greedy"
            check_equal(ids, ref_ids, f"{preemption}: request {i}'s {kind} tokens vs the large pool")
            # A block restored wrongly could leave the argmax alone but not the logprobs.
            worst = max(abs(a - b) for a, b in zip(logprobs, ref_logprobs))
            check(worst <= LOGPROB_TOLERANCE, f"{preemption}: request {i}'s logprobs differ from the large pool's "
                                              f"by up to {worst}")
        log(f"{preemption}: all {NUM_REQUESTS} outputs identical to the large-pool run")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
