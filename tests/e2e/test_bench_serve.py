"""e2e (issue 6): `zinfer-bench serve` against the real CPU server, through both OpenAI endpoints
and the ZeroMQ endpoint: the summary's request count and token totals must be those of the
workload (random dataset, fixed lengths, ignore_eos), with no failed requests, and the token
totals must agree with the server's own /metrics counters. Then vLLM's flags: `--backend vllm`
with `--model` a served name (the server's /tokenize is the tokenizer), `--extra-body`, `--header`,
`--num-warmups`, `--label`, `--save-result --save-detailed` (vLLM's result keys)."""

import json
import os
import re
import shutil
import tempfile
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
        vllm_flags(bench, server)


def vllm_flags(bench, server):
    folder = tempfile.mkdtemp(prefix="zinfer-bench-")
    try:
        cmd = [bench, "serve", "--backend", "vllm", "--base-url", f"http://127.0.0.1:{server.port}",
               "--model", server.model_name, "--dataset-name", "random", "--num-prompts", "6",
               "--random-input-len", "16", "--random-output-len", "4", "--random-prefix-len", "8",
               "--request-rate", "inf", "--ignore-eos", "--seed", "5", "--disable-tqdm", "--num-warmups", "2",
               "--extra-body", json.dumps({"min_tokens": 4, "max_tokens": 4}), "--header", "X-Bench=1",
               "--label", "lbl", "--ready-check-timeout-sec", "30", "--save-result", "--save-detailed",
               "--result-dir", folder, "--result-filename", "r.json"]
        log("running", " ".join(cmd))
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        check_equal(out.returncode, 0, f"zinfer-bench serve --backend vllm (stderr: {out.stderr[-2000:]})")
        check("using the server's /tokenize" in out.stderr, f"the server's tokenizer was used: {out.stderr[-500:]}")
        check_equal(summary_number(out.stdout, "Successful requests:"), 6, "vllm backend: successful requests")
        check_equal(summary_number(out.stdout, "Total generated tokens:"), 24, "vllm backend: generated tokens")
        with open(os.path.join(folder, "r.json")) as f:
            result = json.load(f)
        check_equal(result["label"], "lbl", "label")
        for key in ("ttfts", "itls", "latencies", "start_times", "input_lens", "output_lens", "generated_texts"):
            check_equal(len(result[key]), 6, f"--save-detailed: {key}")
        check(1 <= result["max_concurrent_requests"] <= 6, f"max_concurrent_requests {result['max_concurrent_requests']}")
        check(all(n >= 8 for n in result["input_lens"]), "the prefix is part of every prompt")
        for key in ("request_throughput", "output_throughput", "mean_ttft_ms", "p99_itl_ms", "completed"):
            check(key in result, f"vLLM's key {key}")
        log("--backend vllm with a served name, --extra-body, --header, --num-warmups, --label, --save-detailed")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
