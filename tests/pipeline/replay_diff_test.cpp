// `fieldline parser replay FILE --device ID --diff`: the stored packets of a device parsed with a
// parser file, compared with the readings stored now, while the data directory is in use.
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "pipeline/pipeline_fixture.hpp"
#include "support/run_command.hpp"

namespace fl::testing {

namespace {

// The JSON after the first line starting with `marker` (null when there is none).
json::value line_after(const std::string& out, const std::string& marker) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(marker, 0) == 0) return json::parse(line.substr(marker.size()));
  return nullptr;
}

}  // namespace

class replay_diff : public pipeline_fixture {
 protected:
  std::string replay(const std::string& code, bool diff = true) const {
    const auto file = dir_.path() / "candidate.ex";
    { std::ofstream(file) << code; }
    std::string cmd = FIELDLINE_BINARY;
    cmd += " parser replay " + file.string() + " --device " + device_ + " --data " + dir_.path().string();
    if (diff) cmd += " --diff";
    auto r = run_command(cmd);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.out;
  }
};

TEST_F(replay_diff, shows_what_a_new_parser_would_change_and_writes_nothing) {
  const auto first = send("01", "2024-05-01T10:00:00Z");
  send("02", "2024-05-01T10:01:00Z");
  parse_all();
  const auto before = call("GET", "/api/v1/devices/" + device_ + "/readings", key_).text;

  const auto same = replay(parser_code);
  EXPECT_NE(same.find("2 packets: 2 unchanged, 0 would change, 0 would fail"), std::string::npos) << same;

  const auto changed = replay(R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<1>>, _meta), do: %{v: 1, previous: nil}
  def parse(<<v>>, _meta), do: %{v: v * 10}
end
)");
  EXPECT_NE(changed.find("2 packets: 1 unchanged, 1 would change, 0 would fail"), std::string::npos) << changed;
  EXPECT_EQ(changed.find(first.id()), std::string::npos) << changed;  // unchanged packets are not listed
  EXPECT_EQ(line_after(changed, "- "), json::parse(R"({"measured_at":"2024-05-01T10:01:00.000000Z","location":null,
                                                  "data":{"v":2,"previous":1}})"));
  EXPECT_EQ(line_after(changed, "+ "),
            json::parse(R"({"measured_at":"2024-05-01T10:01:00.000000Z","location":null,"data":{"v":20}})"));

  const auto failing =
      replay("defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: raise \"no\"\nend\n");
  EXPECT_NE(failing.find("2 would fail"), std::string::npos) << failing;
  EXPECT_NE(failing.find("! parse_error"), std::string::npos) << failing;

  // Without --diff: the readings as NDJSON.
  const auto plain = replay(parser_code, false);
  EXPECT_NE(plain.find(R"("v":2)"), std::string::npos) << plain;
  EXPECT_NE(plain.find(R"("previous":1)"), std::string::npos) << plain;

  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/readings", key_).text, before);  // nothing written
}

}  // namespace fl::testing
