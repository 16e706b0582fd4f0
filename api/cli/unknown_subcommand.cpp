#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/cli/commands.hpp"

namespace fl::cli {

// CLI11 answers a mistyped subcommand with "A subcommand is required" or "arguments were not
// expected": walk the arguments as the parser will (options of this command or an enclosing one,
// with their values, are skipped) and name the first word that should have been a subcommand.
std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, const char* const* argv) {
  std::vector<CLI::App*> chain{&app};
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") return std::nullopt;
    if (word.starts_with("-")) {
      if (word.find('=') != std::string_view::npos) continue;
      const CLI::Option* option = nullptr;
      for (auto it = chain.rbegin(); it != chain.rend() && !option; ++it)
        option = (*it)->get_option_no_throw(std::string(word));
      if (option && option->get_expected_max() > 0) ++i;  // its value
      continue;
    }
    CLI::App* current = chain.back();
    auto named = current->get_subcommands([&](CLI::App* sub) { return sub->check_name(std::string(word)); });
    if (!named.empty()) {
      chain.push_back(named.front());
      continue;
    }
    // A positional argument of a command that takes one, or a word where a subcommand belongs.
    if (current->get_require_subcommand_min() > 0) return std::string(word);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace fl::cli
