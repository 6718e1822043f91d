// What a supervisor tells the actors about each other (docs/architecture.md, I38): "down NAME"
// when an actor stopped, stalled or is being restarted, "up NAME" once its replacement answers.
// The text travels on the launcher's control channel and then on the actor's pipe
// (Actor::notify, Loop::on_notice); each actor decides what a peer's restart costs it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zinfer::runtime {

struct PeerNotice {
  enum class Kind { kDown, kUp };
  Kind kind = Kind::kDown;
  std::string actor;

  bool down() const { return kind == Kind::kDown; }
  std::string to_string() const { return (down() ? "down " : "up ") + actor; }
  bool operator==(const PeerNotice&) const = default;

  // nullopt for any other text (a notice of a newer kind is not guessed at).
  static std::optional<PeerNotice> parse(std::string_view text) {
    for (auto [prefix, kind] : {std::pair{std::string_view("down "), Kind::kDown}, std::pair{std::string_view("up "), Kind::kUp}}) {
      if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size()) {
        std::string_view name = text.substr(prefix.size());
        if (name.find(' ') != std::string_view::npos) return std::nullopt;
        return PeerNotice{kind, std::string(name)};
      }
    }
    return std::nullopt;
  }
};

}  // namespace zinfer::runtime
