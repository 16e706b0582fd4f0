#pragma once
// `fieldline parser replay FILE.ex --device ID [--data DIR] [--diff]`: parses a device's stored
// packets (read-only, even while a server runs) with a parser file, writing nothing. With --diff it
// prints only what would change against the readings stored now.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sandbox/outcome.hpp"

namespace fl::cli {

using outcome_printer =
    std::function<int(std::span<const sandbox::packet_input>, const std::vector<sandbox::parse_outcome>&)>;

// `timeout_ms`: the per-packet limit; nullopt: the device's mandate's (what the server applies).
int replay_device_command(const std::string& parser_file, const std::string& device, const std::string& data_dir,
                          bool diff, std::optional<int> timeout_ms, const outcome_printer& print);

}  // namespace fl::cli
