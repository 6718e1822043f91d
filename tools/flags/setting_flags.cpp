#include "tools/flags/setting_flags.h"

#include <stdexcept>

namespace zinfer::cli {

const runtime::ConfigReader& engine_defaults() {
  static const actors::EngineConfig config;
  static const runtime::ConfigReader reader = [] {
    runtime::ConfigReader r;
    // The reader binds mutable references; it is only read through (get, descriptor) here.
    actors::bind_settings(r, const_cast<actors::EngineConfig&>(config));
    return r;
  }();
  return reader;
}

CLI::Option* SettingFlags::add(CLI::App& cmd, const std::string& name, std::string flag) {
  const auto dot = name.find('.');
  if (dot == std::string::npos) throw std::logic_error("setting name '" + name + "' is not section.key");
  auto f = std::make_shared<Flag>();
  f->section = name.substr(0, dot);
  f->key = name.substr(dot + 1);
  const runtime::BoundSetting* s = engine_defaults().find(f->section, f->key);
  if (!s) throw std::logic_error("no setting '" + name + "' for a flag");
  if (flag.empty()) {
    flag = "--" + f->key;
    for (auto& ch : flag) ch = ch == '_' ? '-' : ch;
  }
  f->flag = flag;
  const settings::Descriptor& d = s->descriptor;
  const std::string range = d.range();
  const std::string help =
      d.doc + " [" + (range.empty() ? "" : range + "; ") + "default " + settings::to_string(s->get()) + "; " + d.name() + "]";
  f->option = cmd.add_option(flag, f->text, help);
  static const char* const kTypeNames[] = {"INT", "NUM", "BOOL", "TEXT", "A,B,..."};  // by settings::Type
  f->option->type_name(kTypeNames[static_cast<int>(d.type)]);
  flags_.push_back(std::move(f));
  return flags_.back()->option;
}

void SettingFlags::apply(actors::EngineConfig& config) const {
  runtime::ConfigReader reader;
  actors::bind_settings(reader, config);
  for (const auto& f : flags_) {
    if (f->option->count() == 0) continue;
    const runtime::BoundSetting* s = reader.find(f->section, f->key);
    reader.apply(*s, runtime::parse_value(s->descriptor.type, f->text, f->flag), f->flag);
  }
  actors::check_settings(config, "the command line");
}

actors::EngineConfig SettingFlags::load(const std::string& path) const {
  actors::EngineConfig config = path.empty() ? actors::EngineConfig{} : actors::load_engine_config(path);
  apply(config);
  return config;
}

}  // namespace zinfer::cli
