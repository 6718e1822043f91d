"""Smoke test of `zinfer-bench scheduler --deployments threads,processes,processes-ipc` (part 3):
the scheduler and executor actors (synthetic backend) run as threads, as processes over shm://
rings and as processes over ipc:// with tiny settings
(4 running sequences, windows of at least 20 steps) against the tests' default model folder. It
checks that all three deployments complete with positive step rates, that every step of the window
decoded all 4 sequences, and that a missing `zinfer` binary is a clear error. No timing asserts.

    python3 deployments_smoke_test.py --bench build/bin/zinfer-bench --zinfer build/bin/zinfer \
        --model build/models/default
"""

# Invariant 11 (docs/architecture.md): the same actors over inproc://, shm:// and ipc://.
# Invariant 31 (docs/architecture.md): the command line is a contract (`zinfer-bench scheduler`).

import argparse
import json
import subprocess
import sys


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run_bench(args, extra, timeout):
    cmd = [args.bench, "scheduler", "--running", "4", "--steps", "20", "--queued", "0",
           "--deployments", "threads,processes,processes-ipc", "--model", args.model, "--deployment-timeout", "60"] + extra
    print("running:", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True)
    parser.add_argument("--zinfer", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--timeout", type=float, default=240)
    args = parser.parse_args()

    done = run_bench(args, ["--zinfer", args.zinfer, "--json"], args.timeout)
    if done.returncode != 0:
        fail(f"zinfer-bench exited with {done.returncode}:\n{done.stderr}")
    report = json.loads(done.stdout)["deployments"]
    rows = {row["deployment"]: row for row in report["rows"]}
    if sorted(rows) != ["processes", "processes-ipc", "threads"]:
        fail(f"expected one row per deployment, got {report['rows']}")
    for name, row in rows.items():
        if row["running"] != 4:
            fail(f"{name}: measured {row['running']} running sequences, not 4")
        if row["steps"] < 20:
            fail(f"{name}: a window of {row['steps']} steps, fewer than the 20 asked for")
        for key in ("us_per_step", "steps_per_s", "tokens_per_s", "seconds"):
            if not row[key] > 0:
                fail(f"{name}: {key} is {row[key]}, not positive")
        # Every step of the window decoded the 4 sequences (the bench checks it to within the two
        # plans in flight at either end of the window).
        if abs(row["tokens_per_s"] / row["steps_per_s"] - 4) > 4 * 4 / row["steps"] + 1e-9:
            fail(f"{name}: {row['tokens_per_s'] / row['steps_per_s']:.2f} tokens per step, not 4")
        if not row["detok_messages_per_step"] > 0:
            fail(f"{name}: nothing reached the detokenizer's endpoint")
        print(f"{name}: {row['steps']} steps, {row['us_per_step']:.1f} us/step")
    if sorted((d["deployment"], d["running"]) for d in report["differences"]) != [("processes", 4),
                                                                                  ("processes-ipc", 4)]:
        fail(f"expected both processes/threads differences at 4 running, got {report['differences']}")

    missing = run_bench(args, ["--zinfer", args.model + "/no-such-zinfer"], args.timeout)
    if missing.returncode == 0 or "zinfer" not in missing.stderr or "no-such-zinfer" not in missing.stderr:
        fail(f"a missing zinfer binary should be a clear error, got {missing.returncode}:\n{missing.stderr}")
    print("ok")


if __name__ == "__main__":
    main()
