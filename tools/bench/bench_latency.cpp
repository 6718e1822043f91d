#include "tools/bench/commands.h"
#include "tools/bench/offline.h"

namespace zinfer::bench {

void add_latency_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("latency", "fixed batch through the actors: ms per prefill and per decode step");
  static OfflineArgs args;
  add_offline_options(*cmd, args);
  cmd->add_option("--batch-size", args.batch_size)->check(CLI::PositiveNumber);
  cmd->add_option("--num-iters", args.num_iters)->check(CLI::PositiveNumber);
  cmd->callback([] { run_latency(args); });
}

}  // namespace zinfer::bench
