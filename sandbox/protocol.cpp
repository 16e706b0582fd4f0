#include "sandbox/protocol.hpp"

#include <boost/json.hpp>

namespace fl::sandbox::protocol {

namespace json = boost::json;

std::string text_of(const etf::term* t) {
  if (!t) return {};
  if (const auto* b = t->as_binary()) return *b;
  if (const auto* a = std::get_if<etf::atom>(&t->value)) return a->name == "nil" ? "" : a->name;
  if (const auto* i = t->as_int()) return std::to_string(*i);
  return {};
}

std::vector<std::string> lines_of(const etf::term* t) {
  std::vector<std::string> out;
  if (const auto* l = t ? t->as_list() : nullptr) {
    for (const auto& item : *l) out.push_back(text_of(&item));
  }
  return out;
}

problem_list problems_of(const etf::term* t) {
  problem_list out;
  if (const auto* l = t ? t->as_list() : nullptr) {
    for (const auto& item : *l) {
      const auto* tup = item.as_tuple();
      if (!tup || tup->items.size() != 2) continue;
      std::optional<int> line;
      if (const auto* i = tup->items[0].as_int()) line = static_cast<int>(*i);
      out.emplace_back(line, text_of(&tup->items[1]));
    }
  }
  return out;
}

std::string describe(const problem_list& problems) {
  std::string out;
  for (const auto& [line, message] : problems) {
    if (!out.empty()) out += "; ";
    out += (line ? "line " + std::to_string(*line) + ": " : std::string()) + message;
  }
  return out;
}

const etf::tuple* tagged(const std::optional<etf::term>& t, std::string_view tag, std::size_t size) {
  const auto* tup = t ? t->as_tuple() : nullptr;
  return tup && tup->items.size() == size && tup->items[0].is_atom(tag) ? tup : nullptr;
}

namespace {

// What the host keeps of a worker's texts, whatever the worker sends (the runtime bounds them too):
// a message of 4 KiB, 100 log lines of 2 KiB.
constexpr std::size_t max_message_bytes = 4096;
constexpr std::size_t max_log_lines = 101;
constexpr std::size_t max_log_line_bytes = 2048;

std::string bounded(std::string text, std::size_t most) {
  if (text.size() <= most) return text;
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  const auto dropped = text.size() - cut;
  text.resize(cut);
  return text + " ... (" + std::to_string(dropped) + " more bytes cut)";
}

std::vector<std::string> bounded_lines(const etf::term* t) {
  auto lines = lines_of(t);
  if (lines.size() > max_log_lines) lines.resize(max_log_lines);
  for (auto& line : lines) line = bounded(std::move(line), max_log_line_bytes);
  return lines;
}

std::optional<outcome_kind> kind_of(const etf::term& t) {
  for (auto k : {outcome_kind::parse_error, outcome_kind::timeout, outcome_kind::memory_limit, outcome_kind::crashed})
    if (t.is_atom(outcome_name(k))) return k;
  return std::nullopt;
}

void put_limits(etf::writer& w, const parse_limits& limits) {
  w.put_map(3);
  w.put_binary("timeout_ms");
  w.put_int(limits.timeout_ms);
  w.put_binary("heap_words");
  w.put_int(limits.heap_words);
  w.put_binary("budget_ms");
  w.put_int(limits.budget_ms);
}

// {id, device_id, payload_encoding, payload, meta, transceived_at, packet_type} (worker.ex).
void put_packet(etf::writer& w, const packet_input& p) {
  w.put_tuple(7);
  w.put_binary(p.id);
  w.put_binary(p.device_id);
  w.put_binary(p.payload_encoding);
  if (p.payload_encoding == "json") {
    w.put_json(p.json_payload);
  } else if (p.payload_encoding == "binary" || p.payload_encoding == "utf8") {
    w.put_binary(p.binary_payload);
  } else {
    w.put_atom("nil");
  }
  w.put_json(p.meta);
  w.put_int(p.transceived_at);
  if (p.packet_type) {
    w.put_binary(*p.packet_type);
  } else {
    w.put_atom("nil");
  }
}

}  // namespace

parse_outcome outcome_of(const etf::term& t) {
  parse_outcome out;
  const auto* tup = t.as_tuple();
  if (tup && tup->items.size() == 3 && tup->items[0].is_atom("ok") && tup->items[1].as_list()) {
    for (const auto& r : *tup->items[1].as_list()) {
      // {data, measured_at, location, fields} (Fieldline.Normalize); anything else is not an
      // outcome the runtime makes, so the packet's outcome is a protocol error, not fewer readings.
      const auto* fields = r.as_tuple();
      if (!fields || fields->items.size() != 4) {
        parse_outcome bad;
        bad.kind = outcome_kind::protocol_error;
        bad.message = "worker answered with a reading of an unexpected shape";
        return bad;
      }
      reading rd;
      rd.data = etf::to_json(fields->items[0]);
      if (!rd.data.is_object()) rd.data = json::object{};
      if (const auto* m = fields->items[1].as_int()) rd.measured_at = *m;
      if (const auto* loc = fields->items[2].as_list(); loc && loc->size() == 2) {
        auto coord = [](const etf::term& c) -> std::optional<double> {
          if (const auto* i = c.as_int()) return static_cast<double>(*i);
          if (const auto* d = std::get_if<double>(&c.value)) return *d;
          return std::nullopt;
        };
        auto lon = coord((*loc)[0]), lat = coord((*loc)[1]);
        if (lon && lat) rd.location = std::pair{*lon, *lat};
      }
      if (!fields->items[3].is_atom("nil")) rd.fields = etf::to_json(fields->items[3]);
      out.readings.push_back(std::move(rd));
    }
    out.logs = bounded_lines(&tup->items[2]);
    return out;
  }
  if (tup && tup->items.size() == 4 && tup->items[0].is_atom("error")) {
    out.kind = kind_of(tup->items[1]).value_or(outcome_kind::protocol_error);
    out.message = bounded(text_of(&tup->items[2]), max_message_bytes);
    out.logs = bounded_lines(&tup->items[3]);
    return out;
  }
  out.kind = outcome_kind::protocol_error;
  out.message = "worker answered with an unexpected outcome";
  return out;
}

std::optional<outcomes> outcomes_frame(const etf::term& frame, std::size_t expected_index, std::size_t left) {
  const auto* tup = frame.as_tuple();
  if (!tup || (tup->items.size() != 3 && tup->items.size() != 4) || !tup->items[0].is_atom("outcomes"))
    return std::nullopt;
  const bool last = tup->items.size() == 4;
  const auto* index = tup->items[1].as_int();
  const auto* list = tup->items[2].as_list();
  if (!index || *index != static_cast<std::int64_t>(expected_index) || !list || list->empty() || list->size() > left ||
      (last != (list->size() == left)))
    return std::nullopt;
  outcomes out;
  out.items.reserve(list->size());
  for (const auto& t : *list) out.items.push_back(outcome_of(t));
  if (last) out.stats = &tup->items[3];
  return out;
}

std::string ping_request() {
  return etf::encode(etf::make_tuple({etf::make_atom("ping")}));
}

std::string check_request(const std::string& source) {
  return etf::encode(etf::make_tuple({etf::make_atom("check"), etf::make_binary(source)}));
}

std::string test_request(const parser_code& code, const parse_limits& limits) {
  etf::writer w;
  w.put_tuple(4);
  w.put_atom("test");
  w.put_binary(code.key());
  w.put_binary(code.source);
  put_limits(w, limits);
  return std::move(w).take();
}

std::string parse_request(std::string_view key, const parser_code& code, const parse_limits& limits,
                          const std::vector<stored_reading>& history, const boost::json::value& device,
                          std::span<const packet_input> packets, bool announce) {
  etf::writer w;
  w.put_tuple(8);
  w.put_atom("parse");
  w.put_binary(key);
  w.put_binary(code.source);
  put_limits(w, limits);
  w.put_list(history.size());
  for (const auto& r : history) {
    w.put_map(2);
    w.put_binary("data");
    w.put_json(r.data);
    w.put_binary("measured_at");
    w.put_int(r.measured_at);
  }
  if (!history.empty()) w.put_nil();
  w.put_list(packets.size());
  for (const auto& p : packets) put_packet(w, p);
  if (!packets.empty()) w.put_nil();
  w.put_atom(announce ? "true" : "false");
  if (device.is_object())
    w.put_json(device);
  else
    w.put_atom("nil");
  return std::move(w).take();
}

}  // namespace fl::sandbox::protocol
