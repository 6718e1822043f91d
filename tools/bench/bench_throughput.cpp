#include "tools/bench/commands.h"
#include "tools/bench/offline.h"

namespace zinfer::bench {

void add_throughput_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("throughput", "N random prompts at once through the actors: requests/s and tokens/s");
  static OfflineArgs args;
  add_offline_options(*cmd, args);
  cmd->add_option("--num-prompts", args.num_prompts)->check(CLI::PositiveNumber);
  cmd->callback([] { run_throughput(args); });
}

}  // namespace zinfer::bench
