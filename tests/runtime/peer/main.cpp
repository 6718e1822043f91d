// runtime_peer ENDPOINT: runs an echo actor bound at ENDPOINT until SIGTERM/SIGINT.
#include <cstdio>

#include "runtime/echo_actor.h"
#include "runtime/signals.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: runtime_peer ENDPOINT\n");
    return 2;
  }
  zinfer::runtime::block_shutdown_signals();
  zinfer::runtime::Actor echo("echo", zinfer::runtime::echo_actor(argv[1]));
  std::printf("ready\n");
  std::fflush(stdout);
  zinfer::runtime::wait_for_shutdown_signal();
  return 0;
}
