// zinfer-bench runtime: actor-to-actor round-trip latency (p50/p99) and one-way throughput of
// msgpack messages (protocol BenchPayload) of 200 bytes and 8 KiB, over inproc and ipc.
// Round trip: an actor's DEALER sends a message to an echo actor (ROUTER) and sends the next one
// when it came back.
// One-way: a PUSH socket sends as fast as it can to a sink actor (PULL) that counts.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/echo_actor.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"
#include "tools/bench/commands.h"

namespace zinfer::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct RoundTrip {
  double p50_us = 0, p99_us = 0, mean_us = 0;
};

RoundTrip measure_round_trip(const std::string& endpoint, size_t payload_bytes, int iterations) {
  runtime::Actor echo("echo", runtime::echo_actor(endpoint));
  // The other side is an actor too: a DEALER in its own Loop that sends the next message when the
  // previous one came back, so both ends run the runtime's loop (spin-then-block included).
  std::vector<double> us;
  us.reserve(static_cast<size_t>(iterations));
  std::atomic<bool> done{false};
  std::string failure;
  {
    runtime::Actor pinger("pinger", [&](runtime::Pipe& pipe) {
      zmq::socket_t dealer(runtime::zmq_context(), zmq::socket_type::dealer);
      dealer.set(zmq::sockopt::linger, 0);
      dealer.connect(endpoint);
      runtime::Loop loop(&pipe);
      protocol::BenchPayload msg;
      msg.blob.assign(payload_bytes, 'z');
      int i = -iterations / 10;  // the first tenth warms up
      Clock::time_point t0;
      auto send_next = [&] {
        msg.seq = static_cast<uint64_t>(i + iterations);
        t0 = Clock::now();
        runtime::send_message(dealer, msg);
      };
      loop.on(dealer, [&](zmq::socket_t& s) {
        auto reply = runtime::recv_frame(s, true);
        if (!reply) return;
        auto t1 = Clock::now();
        if (protocol::decode<protocol::BenchPayload>(*reply).seq != msg.seq) {
          failure = "round trip lost a message";
          loop.stop();
          return;
        }
        if (i >= 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        if (++i == iterations) {
          done = true;
          loop.stop();
          return;
        }
        send_next();
      });
      pipe.signal_ready();
      send_next();
      loop.run();
      if (!done) loop.run();  // stopped on a failure: wait for Term
    });
    while (!done && failure.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!failure.empty()) throw std::runtime_error(failure);
  std::sort(us.begin(), us.end());
  RoundTrip r;
  r.p50_us = us[us.size() / 2];
  r.p99_us = us[us.size() * 99 / 100];
  double sum = 0;
  for (double x : us) sum += x;
  r.mean_us = sum / static_cast<double>(us.size());
  return r;
}

double measure_one_way(const std::string& endpoint, size_t payload_bytes, int messages) {
  auto received = std::make_shared<std::atomic<uint64_t>>(0);
  runtime::Actor sink("sink", runtime::sink_actor(endpoint, received));
  zmq::socket_t push(runtime::zmq_context(), zmq::socket_type::push);
  runtime::configure_pipeline_socket(push);
  push.connect(endpoint);
  protocol::BenchPayload msg;
  msg.blob.assign(payload_bytes, 'z');
  auto t0 = Clock::now();
  for (int i = 0; i < messages; ++i) {
    msg.seq = static_cast<uint64_t>(i);
    runtime::send_message(push, msg);  // encodes each message, as a real sender does
  }
  while (received->load() < static_cast<uint64_t>(messages)) std::this_thread::yield();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return messages / s;
}

}  // namespace

void add_runtime_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("runtime", "actor-to-actor latency and throughput over inproc and ipc");
  static int iterations = 20000;
  static int messages = 500000;
  static bool json = false;
  cmd->add_option("--iterations", iterations, "round trips per case")->check(CLI::PositiveNumber);
  cmd->add_option("--messages", messages, "messages per one-way case")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", json, "print one JSON object");
  cmd->callback([] {
    nlohmann::json out = nlohmann::json::array();
    const std::string ipc_base = "ipc:///tmp/zinfer-bench-" + std::to_string(getpid());
    int case_no = 0;
    if (!json) {
      std::printf("%-8s %8s %12s %12s %12s %16s\n", "transport", "bytes", "rtt p50 us", "rtt p99 us", "rtt mean us",
                  "one-way msg/s");
    }
    for (std::string transport : {"inproc", "ipc"}) {
      for (size_t bytes : {size_t(200), size_t(8192)}) {
        std::string ep = (transport == "inproc" ? "inproc://zinfer-bench-" : ipc_base + "-") + std::to_string(case_no++);
        RoundTrip rt = measure_round_trip(ep + "-rt", bytes, iterations);
        int n = bytes > 1000 ? messages / 4 : messages;
        double rate = measure_one_way(ep + "-ow", bytes, n);
        if (json) {
          out.push_back({{"transport", transport}, {"bytes", bytes}, {"rtt_p50_us", rt.p50_us},
                         {"rtt_p99_us", rt.p99_us}, {"rtt_mean_us", rt.mean_us}, {"one_way_msgs_per_s", rate}});
        } else {
          std::printf("%-8s %8zu %12.1f %12.1f %12.1f %16.0f\n", transport.c_str(), bytes, rt.p50_us, rt.p99_us,
                      rt.mean_us, rate);
        }
      }
    }
    if (json) std::printf("%s\n", out.dump(2).c_str());
  });
}

}  // namespace zinfer::bench
