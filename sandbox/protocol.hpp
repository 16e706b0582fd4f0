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
[[nodiscard]] std::string parse_request(const parser_code& code, const parse_limits& limits,
                                        const std::vector<stored_reading>& history,
                                        std::span<const packet_input> packets);

// `{:outcomes, index, [outcome, ...]}` -> the outcomes when `index` is the expected one and they
// are at least one and at most `most`; nullopt for anything else.
[[nodiscard]] std::optional<std::vector<parse_outcome>> outcomes_frame(const etf::term& frame,
                                                                       std::size_t expected_index, std::size_t most);
[[nodiscard]] parse_outcome outcome_of(const etf::term& t);
[[nodiscard]] problem_list problems_of(const etf::term* t);
[[nodiscard]] std::string describe(const problem_list& problems);
[[nodiscard]] std::string text_of(const etf::term* t);
[[nodiscard]] std::vector<std::string> lines_of(const etf::term* t);
// A tuple whose first element is the atom `tag` and that has `size` elements, else null.
[[nodiscard]] const etf::tuple* tagged(const std::optional<etf::term>& t, std::string_view tag, std::size_t size);

}  // namespace fl::sandbox::protocol
