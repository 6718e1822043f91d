#include "tools/flags/setting_flags.h"

#include <cmath>
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

std::shared_ptr<SettingFlags::Flag> SettingFlags::make(const std::string& name) const {
  const auto dot = name.find('.');
  if (dot == std::string::npos) throw std::logic_error("setting name '" + name + "' is not section.key");
  auto f = std::make_shared<Flag>();
  f->section = name.substr(0, dot);
  f->key = name.substr(dot + 1);
  if (!engine_defaults().find(f->section, f->key)) throw std::logic_error("no setting '" + name + "' for a flag");
  return f;
}

// "doc [legal values; default D; section.key]", from the setting's description.
std::string SettingFlags::help(const Flag& f, const std::string& extra) const {
  const runtime::BoundSetting* s = engine_defaults().find(f.section, f.key);
  const settings::Descriptor& d = s->descriptor;
  const std::string range = d.range();
  return d.doc + " [" + extra + (range.empty() ? "" : range + "; ") + "default " + settings::to_string(s->get()) +
         "; " + d.name() + "]";
}

CLI::Option* SettingFlags::add(CLI::App& cmd, const std::string& name, std::string flag) {
  auto f = make(name);
  if (flag.empty()) {
    flag = "--" + f->key;
    for (auto& ch : flag) ch = ch == '_' ? '-' : ch;
  }
  f->flag = flag;
  const settings::Descriptor& d = engine_defaults().find(f->section, f->key)->descriptor;
  f->option = cmd.add_option(flag, f->text, help(*f));
  static const char* const kTypeNames[] = {"INT", "NUM", "BOOL", "TEXT", "A,B,..."};  // by settings::Type
  f->option->type_name(kTypeNames[static_cast<int>(d.type)]);
  flags_.push_back(std::move(f));
  return flags_.back()->option;
}

void SettingFlags::add_switch(CLI::App& cmd, const std::string& name, const std::string& on, const std::string& off) {
  auto f = make(name);
  if (engine_defaults().find(f->section, f->key)->descriptor.type != settings::Type::kBoolean) {
    throw std::logic_error("a switch for the setting '" + name + "', which is not a boolean");
  }
  f->flag = on;
  f->option = cmd.add_flag(on)->description(help(*f, "sets it true; "));
  f->off = cmd.add_flag(off)->description("sets " + name + " false");
  f->option->excludes(f->off);
  flags_.push_back(std::move(f));
}

CLI::Option* SettingFlags::add_scaled(CLI::App& cmd, const std::string& name, const std::string& flag, double scale,
                                      const std::string& unit) {
  auto f = make(name);
  if (engine_defaults().find(f->section, f->key)->descriptor.type != settings::Type::kInteger) {
    throw std::logic_error("a scaled flag for the setting '" + name + "', which is not an integer");
  }
  f->flag = flag;
  f->scale = scale;
  // The help speaks the flag's unit: its default and range divided by the scale.
  const runtime::BoundSetting* b = engine_defaults().find(f->section, f->key);
  const settings::Descriptor& d = b->descriptor;
  const double per = 1.0 / scale;
  f->option = cmd.add_option(
      flag, f->text,
      d.doc + " [in " + unit + ": " + settings::format_number(d.int_min * per) + ".." +
          settings::format_number(d.int_max * per) + "; default " +
          settings::format_number(std::get<int64_t>(b->get()) * per) + "; " + d.name() + " = this times " +
          settings::format_number(scale) + "]");
  f->option->type_name("NUM");
  flags_.push_back(std::move(f));
  return flags_.back()->option;
}

CLI::Option* SettingFlags::add_split(CLI::App& cmd, const std::string& flag, const std::string& first,
                                     const std::string& rest) {
  auto f = make(first);
  auto r = make(rest);
  f->rest_section = r->section;
  f->rest_key = r->key;
  f->flag = flag;
  f->option = cmd.add_option(flag, f->texts, help(*f, "further names: " + rest + "; "));
  f->option->expected(1, -1);
  flags_.push_back(std::move(f));
  return flags_.back()->option;
}

std::vector<std::string> SettingFlags::names() const {
  std::vector<std::string> out;
  for (const auto& f : flags_) {
    out.push_back(f->section + "." + f->key);
    if (!f->rest_key.empty()) out.push_back(f->rest_section + "." + f->rest_key);
  }
  return out;
}

void SettingFlags::apply(actors::EngineConfig& config) const {
  runtime::ConfigReader reader;
  actors::bind_settings(reader, config);
  for (const auto& f : flags_) {
    const runtime::BoundSetting* s = reader.find(f->section, f->key);
    if (f->off) {
      if (f->option->count() > 0) reader.apply(*s, settings::Value(true), f->flag);
      if (f->off->count() > 0) reader.apply(*s, settings::Value(false), f->off->get_name());
      continue;
    }
    if (f->option->count() == 0) continue;
    if (!f->rest_key.empty()) {
      reader.apply(*s, settings::Value(f->texts.front()), f->flag);
      reader.apply(*reader.find(f->rest_section, f->rest_key),
                   settings::Value(std::vector<std::string>(f->texts.begin() + 1, f->texts.end())), f->flag);
    } else if (f->scale != 0) {
      const double x = std::get<double>(runtime::parse_value(settings::Type::kNumber, f->text, f->flag));
      reader.apply(*s, settings::Value(static_cast<int64_t>(std::llround(x * f->scale))), f->flag);
    } else {
      reader.apply(*s, runtime::parse_value(s->descriptor.type, f->text, f->flag), f->flag);
    }
  }
  actors::check_settings(config, "the command line");
}

actors::EngineConfig SettingFlags::load(const std::string& path) const {
  actors::EngineConfig config = path.empty() ? actors::EngineConfig{} : actors::load_engine_config(path);
  apply(config);
  return config;
}

}  // namespace zinfer::cli
