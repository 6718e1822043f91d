#include "runtime/logging.h"

#include <mutex>
#include <stdexcept>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace zinfer::runtime {

namespace {
std::mutex g_mutex;
spdlog::level::level_enum g_level = spdlog::level::info;
}  // namespace

std::shared_ptr<spdlog::logger> logger(const std::string& name) {
  std::lock_guard lock(g_mutex);
  if (auto existing = spdlog::get(name)) return existing;
  static auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto l = std::make_shared<spdlog::logger>(name, sink);
  l->set_level(g_level);
  l->set_pattern("%Y-%m-%d %H:%M:%S.%e [%n] %^%l%$ %v");
  spdlog::register_logger(l);
  return l;
}

void set_log_level(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    throw std::invalid_argument("unknown log level '" + level + "'");
  }
  std::lock_guard lock(g_mutex);
  g_level = lvl;
  spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) { l->set_level(lvl); });
}

}  // namespace zinfer::runtime
