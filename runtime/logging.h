// spdlog with one named logger per actor ("tokenizer", "scheduler", ...), all writing to stderr
// through one sink so lines of different threads do not interleave.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace zinfer::runtime {

std::shared_ptr<spdlog::logger> logger(const std::string& name);
// "trace", "debug", "info", "warn", "error", "off"; throws std::invalid_argument otherwise.
void set_log_level(const std::string& level);

}  // namespace zinfer::runtime
