#pragma once
// The shapes of the frames between host and worker (parsers/runtime/worker.ex documents the
// worker's side): requests built from the host's types, answers turned back into them. Every
// answer is untrusted: anything of an unexpected shape becomes a protocol_error, never a crash.
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/etf.hpp"
#include "sandbox/outcome.hpp"

namespace fl::sandbox::protocol {

using problem_list = std::vector<std::pair<std::optional<int>, std::string>>;

[[nodiscard]] std::string ping_request();
[[nodiscard]] std::string check_request(const std::string& source);
[[nodiscard]] std::string test_request(const parser_code& code, const parse_limits& limits);
// `announce`: the worker answers {:ready} once the parser is compiled (the host does not know it to
// be compiled there yet, and gives that frame the compile budget).
// `key`: code.key(), which the caller has at hand (hashing the source again costs per call).
[[nodiscard]] std::string parse_request(std::string_view key, const parser_code& code, const parse_limits& limits,
                                        const std::vector<stored_reading>& history, const boost::json::value& device,
                                        std::span<const packet_input> packets, bool announce);

// `{:outcomes, index, [outcome, ...]}` (more to come) or `{:outcomes, index, [outcome, ...], stats}`
// (the last): the outcomes when `index` is the expected one, they are at least one, and the last
// frame completes the batch exactly (`left` outcomes were still owed); nullopt for anything else.
struct outcomes {
  std::vector<parse_outcome> items;
  const etf::term* stats = nullptr;  // set on the last frame (points into the frame)
};
[[nodiscard]] std::optional<outcomes> outcomes_frame(const etf::term& frame, std::size_t expected_index,
                                                     std::size_t left);
[[nodiscard]] parse_outcome outcome_of(const etf::term& t);
[[nodiscard]] problem_list problems_of(const etf::term* t);
[[nodiscard]] std::string describe(const problem_list& problems);
[[nodiscard]] std::string text_of(const etf::term* t);
[[nodiscard]] std::vector<std::string> lines_of(const etf::term* t);
// A tuple whose first element is the atom `tag` and that has `size` elements, else null.
[[nodiscard]] const etf::tuple* tagged(const std::optional<etf::term>& t, std::string_view tag, std::size_t size);

}  // namespace fl::sandbox::protocol
