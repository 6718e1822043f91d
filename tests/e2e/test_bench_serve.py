"""e2e (issue 6): `zinfer-bench serve` against the real CPU server, through both OpenAI endpoints
and the ZeroMQ endpoint: the summary's request count and token totals must be those of the
workload (random dataset, fixed lengths, ignore_eos), with no failed requests, and the token
totals must agree with the server's own /metrics counters."""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Server, check, check_equal, log, main_wrapper, metric, metrics, parse_args  # noqa: E402

NUM_PROMPTS = 12
INPUT_LEN = 24
OUTPUT_LEN = 6


def summary_number(text, label):
    m = re.search(re.escape(label) + r"\s+([0-9.]+)", text)
    check(m is not None, f"'{label}' missing from the summary:\n{text}")
    return float(m.group(1))


def run_bench(bench, args, server, backend, base_url):
    cmd = [bench, "serve", "--backend", backend, "--base-url", base_url, "--model", os.path.abspath(args.model),
           "--served-model-name", server.model_name, "--dataset-name", "random", "--num-prompts", str(NUM_PROMPTS),
           "--random-input-len", str(INPUT_LEN), "--random-output-len", str(OUTPUT_LEN), "--request-rate", "inf",
           "--max-concurrency", "4", "--ignore-eos", "--seed", "3", "--disable-tqdm"]
    if backend == "zinfer-zmq":
        cmd = [c for c in cmd if c not in ("--served-model-name", server.model_name)]
    log("running", " ".join(cmd))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    check_equal(out.returncode, 0, f"zinfer-bench serve exit status (stderr: {out.stderr[-2000:]})")
    return out.stdout


def body(args):
    bench = os.path.join(os.path.dirname(os.path.abspath(args.zinfer)), "zinfer-bench")
    with Server(args) as server:
        before = metrics(server.port)
        generated_before = metric(before, "zinfer_generation_tokens_total")
        total_generated = 0
        for backend, base_url in (("openai", f"http://127.0.0.1:{server.port}"),
                                  ("openai-chat", f"http://127.0.0.1:{server.port}"),
                                  ("zinfer-zmq", server.zmq_endpoint)):
            text = run_bench(bench, args, server, backend, base_url)
            check_equal(summary_number(text, "Successful requests:"), NUM_PROMPTS, f"{backend}: successful requests")
            generated = summary_number(text, "Total generated tokens:")
            check_equal(generated, NUM_PROMPTS * OUTPUT_LEN, f"{backend}: generated tokens")
            input_tokens = summary_number(text, "Total input tokens:")
            # The random dataset makes each prompt INPUT_LEN tokens long by the model's tokenizer.
            check_equal(input_tokens, NUM_PROMPTS * INPUT_LEN, f"{backend}: input tokens")
            failed = re.search(r"Failed requests:\s+([0-9]+)", text)
            check(failed is None or int(failed.group(1)) == 0, f"{backend}: failed requests in\n{text}")
            total_generated += generated
            log(f"{backend}: {int(generated)} tokens generated, {int(input_tokens)} input tokens")
        after = metrics(server.port)
        check_equal(metric(after, "zinfer_generation_tokens_total") - generated_before, total_generated,
                    "generation tokens counted by /metrics over the three runs")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
