#!/usr/bin/python3
"""A client of zinfer's ZeroMQ endpoint (docs/protocol.md, protocol 1.0), with Debian's
python3-zmq and python3-msgpack.

    /usr/bin/python3 examples/python/client.py --endpoint tcp://127.0.0.1:5555 \
        --prompt "Hello" --max-tokens 16 [--temperature T] [--seed S] [--json]

With CURVE (the server's [server] zmq_curve_* settings): --curve-server-key server.pub
--curve-secret-key-file client.key.

Prints the text as it streams, or with --json one object {"token_ids": [...], "text": "..."}.
Exit status: 0 finished, 1 ErrorReply, 2 bad usage, 3 timeout.
"""

import argparse
import json
import os
import sys

import msgpack
import zmq

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 0

# Message types (protocol/messages.h).
ERROR_REPLY = 3
GENERATE_REQUEST = 10
ABORT = 12
TEXT_DELTA = 15


def encode(message_type, payload):
    """The envelope: [major, minor, type, payload map]."""
    return msgpack.packb([PROTOCOL_MAJOR, PROTOCOL_MINOR, message_type, payload], use_bin_type=True)


def decode(frame):
    envelope = msgpack.unpackb(frame, raw=False, unicode_errors="replace", strict_map_key=False)
    if not isinstance(envelope, list) or len(envelope) != 4:
        raise ValueError("not a zinfer envelope")
    major, _minor, message_type, payload = envelope
    if major > PROTOCOL_MAJOR:
        raise ValueError(f"the server speaks protocol {major}.x, this client {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}")
    return message_type, payload


def read_key(path):
    """The first Z85 key of a key file ('#' comment lines; a key may be quoted), as the server reads them."""
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):  # a comment is a whole line: '#' is also a Z85 character
                continue
            if '"' in line:
                line = line.split('"')[1]
            if line:
                if len(line) != 40:
                    raise SystemExit(f"{path}: not a Z85 CURVE key")
                return line.encode()
    raise SystemExit(f"{path} holds no key")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", default="tcp://127.0.0.1:5555")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=-1)
    parser.add_argument("--model", default="")
    parser.add_argument("--ignore-eos", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--timeout-ms", type=int, default=120000)
    parser.add_argument("--api-key", default=os.environ.get("ZINFER_API_KEY", ""),
                        help="the gateway's API key (default: $ZINFER_API_KEY); sent only when set")
    parser.add_argument("--curve-server-key", default="",
                        help="CURVE: a file with the server's public key (docs/protocol.md, Access)")
    parser.add_argument("--curve-secret-key-file", default="",
                        help="CURVE: a file with this client's secret key (the server lists its public key)")
    args = parser.parse_args()

    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if args.curve_server_key or args.curve_secret_key_file:
        if not (args.curve_server_key and args.curve_secret_key_file):
            raise SystemExit("--curve-server-key and --curve-secret-key-file go together")
        secret = read_key(args.curve_secret_key_file)
        sock.curve_serverkey = read_key(args.curve_server_key)
        sock.curve_secretkey = secret
        sock.curve_publickey = zmq.curve_public(secret)
    sock.connect(args.endpoint)

    request_id = 1  # one request per connection: any non-zero id is unique on it
    request = {
        "request_id": request_id,
        "model": args.model,
        "prompt": args.prompt,
        "sampling": {
            "max_tokens": args.max_tokens,
            "temperature": args.temperature,
            "seed": args.seed,
            "ignore_eos": args.ignore_eos,
        },
    }
    if args.api_key:
        request["api_key"] = args.api_key  # protocol 1.5 (docs/protocol.md, Access)
    sock.send(encode(GENERATE_REQUEST, request))

    token_ids = []
    text = ""
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    while True:
        if not poller.poll(args.timeout_ms):
            print(f"client.py: no answer from {args.endpoint} within {args.timeout_ms} ms", file=sys.stderr)
            return 3
        message_type, payload = decode(sock.recv())
        if message_type == ERROR_REPLY:
            print(f"client.py: error {payload.get('code')} ({payload.get('kind')}): {payload.get('message')}",
                  file=sys.stderr)
            return 1
        if message_type != TEXT_DELTA or payload.get("request_id") != request_id:
            continue
        token_ids.extend(payload.get("token_ids", []))
        piece = payload.get("text", "")
        text += piece
        if not args.json:
            sys.stdout.write(piece)
            sys.stdout.flush()
        if payload.get("finish_reason"):
            break

    if args.json:
        print(json.dumps({"token_ids": token_ids, "text": text}, ensure_ascii=False))
    else:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
