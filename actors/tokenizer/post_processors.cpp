// The post-processors of tokenizer.json for a single sequence: TemplateProcessing, Roberta/Bert
// processing (cls A sep), ByteLevel (offsets only, so nothing to do on ids) and Sequence.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/tokenizer/components.h"
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok {

namespace {

// Wraps the sequence in fixed ids: prefix + ids + suffix.
class Wrap final : public PostProcessor {
 public:
  Wrap(std::vector<int32_t> prefix, std::vector<int32_t> suffix) : prefix_(std::move(prefix)), suffix_(std::move(suffix)) {}
  void process(std::vector<int32_t>& ids, bool add_special_tokens) const override {
    if (!add_special_tokens) return;
    ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
    ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  }

 private:
  std::vector<int32_t> prefix_, suffix_;
};

class Nothing final : public PostProcessor {
 public:
  void process(std::vector<int32_t>&, bool) const override {}
};

class PostProcessorSequence final : public PostProcessor {
 public:
  explicit PostProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void process(std::vector<int32_t>& ids, bool add_special_tokens) const override {
    for (const auto& step : steps_) step->process(ids, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

std::unique_ptr<PostProcessor> template_processing(const nlohmann::json& j, const std::string& origin) {
  const auto& single = j.at("single");
  const auto& specials = j.contains("special_tokens") ? j["special_tokens"] : nlohmann::json::object();
  std::vector<int32_t> prefix, suffix;
  bool seen_sequence = false;
  for (const auto& piece : single) {
    if (piece.contains("Sequence")) {
      const std::string id = piece["Sequence"].at("id").get<std::string>();
      if (id != "A")
        throw TokenizerError(origin + ": TemplateProcessing single template refers to sequence '" + id + "'");
      seen_sequence = true;
    } else if (piece.contains("SpecialToken")) {
      const std::string name = piece["SpecialToken"].at("id").get<std::string>();
      if (!specials.contains(name))
        throw TokenizerError(origin + ": TemplateProcessing uses special token '" + name +
                             "', which its special_tokens do not define");
      auto& dst = seen_sequence ? suffix : prefix;
      for (const auto& id : specials[name].at("ids")) dst.push_back(id.get<int32_t>());
    } else {
      throw TokenizerError(origin + ": unsupported TemplateProcessing piece " + piece.dump());
    }
  }
  return std::make_unique<Wrap>(std::move(prefix), std::move(suffix));
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const nlohmann::json& j, const std::string& origin) {
  if (j.is_null()) return nullptr;
  const std::string type = j.value("type", "");
  try {
    if (type == "TemplateProcessing") return template_processing(j, origin);
    if (type == "ByteLevel") return std::make_unique<Nothing>();
    if (type == "RobertaProcessing" || type == "BertProcessing") {
      // cls and sep are [token, id] pairs.
      return std::make_unique<Wrap>(std::vector<int32_t>{j.at("cls").at(1).get<int32_t>()},
                                    std::vector<int32_t>{j.at("sep").at(1).get<int32_t>()});
    }
    if (type == "Sequence") {
      std::vector<std::unique_ptr<PostProcessor>> steps;
      for (const auto& step : j.at("processors")) {
        if (auto p = make_post_processor(step, origin)) steps.push_back(std::move(p));
      }
      return std::make_unique<PostProcessorSequence>(std::move(steps));
    }
  } catch (const nlohmann::json::exception& e) {
    throw TokenizerError(origin + ": malformed post-processor " + type + ": " + e.what());
  }
  throw TokenizerError(origin + ": unsupported post-processor type '" + type + "'");
}

}  // namespace zinfer::tok
