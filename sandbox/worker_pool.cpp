#include "sandbox/worker_pool.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "sandbox/etf.hpp"

namespace fl::sandbox {

namespace json = boost::json;

std::string_view outcome_name(outcome_kind k) {
  switch (k) {
    case outcome_kind::ok:
      return "ok";
    case outcome_kind::parse_error:
      return "parse_error";
    case outcome_kind::timeout:
      return "timeout";
    case outcome_kind::memory_limit:
      return "memory_limit";
    case outcome_kind::violation:
      return "violation";
    case outcome_kind::crashed:
      return "crashed";
    case outcome_kind::protocol_error:
      return "protocol_error";
  }
  return "unknown";
}

std::string parser_code::key() const {
  return to_hex(sha256(source)).substr(0, 32);
}

std::filesystem::path default_runtime_ebin() {
  if (const char* env = std::getenv("FIELDLINE_RUNTIME_EBIN"); env && *env) return env;
  return FIELDLINE_RUNTIME_EBIN;
}

void install_runtime(const std::filesystem::path& runtime_ebin, const std::filesystem::path& target) {
  std::filesystem::create_directories(target);
  const auto nif = runtime_ebin.parent_path() / "nif" / "fieldline_lockdown.so";
  if (!std::filesystem::exists(nif)) throw std::runtime_error("lockdown NIF not found at " + nif.string());
  std::filesystem::copy_file(nif, target / nif.filename());
  for (const auto& entry : std::filesystem::directory_iterator(runtime_ebin)) {
    if (entry.path().extension() == ".beam") std::filesystem::copy_file(entry.path(), target / entry.path().filename());
  }
  ::chmod(target.c_str(), 0755);
}

namespace {

using clock = std::chrono::steady_clock;

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

std::vector<std::pair<std::optional<int>, std::string>> problems_of(const etf::term* t) {
  std::vector<std::pair<std::optional<int>, std::string>> out;
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

std::string describe(const std::vector<std::pair<std::optional<int>, std::string>>& problems) {
  std::string out;
  for (const auto& [line, message] : problems) {
    if (!out.empty()) out += "; ";
    out += (line ? "line " + std::to_string(*line) + ": " : std::string()) + message;
  }
  return out;
}

std::optional<outcome_kind> kind_of(const etf::term& t) {
  for (auto k : {outcome_kind::parse_error, outcome_kind::timeout, outcome_kind::memory_limit, outcome_kind::crashed})
    if (t.is_atom(outcome_name(k))) return k;
  return std::nullopt;
}

parse_outcome outcome_of(const etf::term& t) {
  parse_outcome out;
  const auto* tup = t.as_tuple();
  if (tup && tup->items.size() == 3 && tup->items[0].is_atom("ok") && tup->items[1].as_list()) {
    for (const auto& r : *tup->items[1].as_list()) {
      reading rd;
      if (const auto* d = r.find("data")) rd.data = etf::to_json(*d);
      if (!rd.data.is_object()) rd.data = json::object{};
      if (const auto* m = r.find("measured_at"); m && m->as_int()) rd.measured_at = *m->as_int();
      if (const auto* loc = r.find("location"); loc && loc->as_list() && loc->as_list()->size() == 2) {
        auto coord = [](const etf::term& c) -> std::optional<double> {
          if (const auto* i = c.as_int()) return static_cast<double>(*i);
          if (const auto* d = std::get_if<double>(&c.value)) return *d;
          return std::nullopt;
        };
        auto lon = coord((*loc->as_list())[0]), lat = coord((*loc->as_list())[1]);
        if (lon && lat) rd.location = std::pair{*lon, *lat};
      }
      if (const auto* f = r.find("fields")) rd.fields = etf::to_json(*f);
      out.readings.push_back(std::move(rd));
    }
    out.logs = lines_of(&tup->items[2]);
    return out;
  }
  if (tup && tup->items.size() == 4 && tup->items[0].is_atom("error")) {
    out.kind = kind_of(tup->items[1]).value_or(outcome_kind::protocol_error);
    out.message = text_of(&tup->items[2]);
    out.logs = lines_of(&tup->items[3]);
    return out;
  }
  out.kind = outcome_kind::protocol_error;
  out.message = "worker answered with an unexpected outcome";
  return out;
}

etf::term limits_term(const parse_limits& limits) {
  return etf::map{{etf::make_binary("timeout_ms"), etf::term(std::int64_t{limits.timeout_ms})},
                  {etf::make_binary("heap_words"), etf::term(limits.heap_words)}};
}

etf::term packet_term(const packet_input& p) {
  etf::map m;
  m.emplace_back(etf::make_binary("id"), etf::make_binary(p.id));
  m.emplace_back(etf::make_binary("device_id"), etf::make_binary(p.device_id));
  m.emplace_back(etf::make_binary("payload_encoding"), etf::make_binary(p.payload_encoding));
  etf::term payload = etf::make_atom("nil");
  if (p.payload_encoding == "json") payload = etf::from_json(p.json_payload);
  if (p.payload_encoding == "binary" || p.payload_encoding == "utf8") payload = etf::make_binary(p.binary_payload);
  m.emplace_back(etf::make_binary("payload"), std::move(payload));
  m.emplace_back(etf::make_binary("meta"), etf::from_json(p.meta));
  m.emplace_back(etf::make_binary("transceived_at"), etf::term(p.transceived_at));
  m.emplace_back(etf::make_binary("packet_type"),
                 p.packet_type ? etf::make_binary(*p.packet_type) : etf::make_atom("nil"));
  return etf::term(std::move(m));
}

}  // namespace

worker_pool::worker_pool(pool_config config) : config_(std::move(config)) {
  ::signal(SIGPIPE, SIG_IGN);  // a worker dying mid-write must be an error value, not our death
  filter_ = build_worker_filter();
  if (config_.runtime_ebin.empty()) config_.runtime_ebin = default_runtime_ebin();
  if (!std::filesystem::exists(config_.runtime_ebin / "Elixir.Fieldline.Worker.beam"))
    throw std::runtime_error("parser runtime not found in " + config_.runtime_ebin.string() +
                             " (build it, or set FIELDLINE_RUNTIME_EBIN)");
  auto& w = config_.worker;
  if (w.bindir.empty()) w.bindir = find_bindir(w.erlang_root);

  // A private, world-readable copy of the runtime (workers may run as nobody, and the build tree
  // may sit under a directory nobody cannot enter) and an empty, read-only working directory.
  sandbox_dir_ = std::filesystem::temp_directory_path() / ("fieldline-sandbox-" + uuid::random().str());
  std::filesystem::create_directories(sandbox_dir_ / "empty");
  install_runtime(config_.runtime_ebin, sandbox_dir_ / "ebin");
  ::chmod(sandbox_dir_.c_str(), 0755);
  ::chmod((sandbox_dir_ / "empty").c_str(), 0555);
  w.empty_dir = sandbox_dir_ / "empty";
  const std::filesystem::path elixir_lib = "/usr/lib/elixir/lib";
  w.code_paths = {elixir_lib / "elixir" / "ebin", elixir_lib / "logger" / "ebin", sandbox_dir_ / "ebin"};
  // The protocols consolidated with only the allowed implementations (parsers/consolidate.exs) must
  // come first in the code path, before Elixir's own; `-pa` puts the last directory given first.
  const auto consolidated = config_.runtime_ebin.parent_path() / "consolidated";
  if (!std::filesystem::exists(consolidated / "Elixir.Enumerable.beam"))
    throw std::runtime_error("consolidated protocols not found in " + consolidated.string());
  std::filesystem::copy(consolidated, sandbox_dir_ / "consolidated");
  w.code_paths.push_back(sandbox_dir_ / "consolidated");
}

worker_pool::~worker_pool() {
  {
    std::lock_guard lock(mutex_);
    idle_.clear();  // kills them
  }
  std::error_code ec;
  std::filesystem::remove_all(sandbox_dir_, ec);
}

std::unique_ptr<worker_process> worker_pool::start_worker() {
  auto w = worker_process::spawn(config_.worker, filter_);
  // Boot must finish (a pong: the worker answers only after its post-boot lockdown) before use.
  std::string answer;
  const auto status =
      w->call(etf::encode(etf::make_tuple({etf::make_atom("ping")})), clock::now() + std::chrono::seconds(20), answer);
  const auto pong = status == io_status::ok ? etf::decode(answer) : std::nullopt;
  if (!pong || !pong->as_tuple() || pong->as_tuple()->items.empty() || !pong->as_tuple()->items[0].is_atom("pong"))
    throw std::runtime_error("sandbox: worker did not finish booting: " + w->stderr_tail().substr(0, 300));
  ++started_;
  return w;
}

std::unique_ptr<worker_process> worker_pool::acquire(const std::string& mandate) {
  std::unique_lock lock(mutex_);
  available_.wait(
      lock, [&] { return busy_ < config_.workers && busy_by_mandate_[mandate] < config_.max_workers_per_mandate; });
  ++busy_;
  ++busy_by_mandate_[mandate];
  if (!idle_.empty()) {
    auto w = std::move(idle_.back());
    idle_.pop_back();
    return w;
  }
  lock.unlock();
  try {
    return start_worker();
  } catch (...) {
    release(mandate, nullptr, false);
    throw;
  }
}

void worker_pool::release(const std::string& mandate, std::unique_ptr<worker_process> worker, bool healthy) {
  std::unique_ptr<worker_process> retired;
  {
    std::lock_guard lock(mutex_);
    --busy_;
    if (--busy_by_mandate_[mandate] == 0) busy_by_mandate_.erase(mandate);
    if (worker && healthy && worker->calls < config_.recycle_after_calls) {
      idle_.push_back(std::move(worker));
    } else {
      retired = std::move(worker);
    }
  }
  available_.notify_all();
  // `retired` is killed here, outside the lock.
}

namespace {
// True when the worker's stats say it should be recycled.
bool worn_out(const etf::term* stats, const pool_config& config) {
  if (!stats) return false;
  const auto* atoms = stats->find("atoms");
  const auto* memory = stats->find("memory");
  return (atoms && atoms->as_int() && *atoms->as_int() > config.recycle_atoms) ||
         (memory && memory->as_int() && *memory->as_int() > config.recycle_memory_bytes);
}

struct call_result {
  io_status status;
  std::optional<etf::term> answer;
  std::string stderr_tail;
};
}  // namespace

std::vector<parse_outcome> worker_pool::parse(const std::string& mandate, const parser_code& code,
                                              const parse_limits& limits,
                                              const std::vector<stored_reading>& last_readings,
                                              std::span<const packet_input> packets) {
  if (packets.empty()) return {};
  etf::list history;
  for (const auto& r : last_readings) {
    history.push_back(etf::map{{etf::make_binary("data"), etf::from_json(r.data)},
                               {etf::make_binary("measured_at"), etf::term(r.measured_at)}});
  }
  etf::list items;
  for (const auto& p : packets) items.push_back(packet_term(p));
  const std::string request =
      etf::encode(etf::make_tuple({etf::make_atom("parse"), etf::make_binary(code.key()), etf::make_binary(code.source),
                                   limits_term(limits), etf::term(std::move(history)), etf::term(std::move(items))}));
  const auto deadline = clock::now() + config_.compile_budget +
                        std::chrono::milliseconds(static_cast<long long>(limits.timeout_ms + 50) *
                                                  static_cast<long long>(packets.size())) +
                        std::chrono::seconds(2);

  auto worker = acquire(mandate);
  std::string answer;
  const io_status status = worker->call(request, deadline, answer);
  std::string error;
  std::optional<etf::term> decoded;
  if (status == io_status::ok) decoded = etf::decode(answer, &error);

  const auto* tup = decoded ? decoded->as_tuple() : nullptr;
  if (tup && tup->items.size() == 3 && tup->items[0].is_atom("results") && tup->items[1].as_list() &&
      tup->items[1].as_list()->size() == packets.size()) {
    std::vector<parse_outcome> out;
    for (const auto& t : *tup->items[1].as_list()) out.push_back(outcome_of(t));
    release(mandate, std::move(worker), !worn_out(&tup->items[2], config_));
    return out;
  }
  if (tup && tup->items.size() == 3 && tup->items[0].is_atom("rejected")) {
    const std::string why = "parser rejected: " + describe(problems_of(&tup->items[1]));
    release(mandate, std::move(worker), !worn_out(&tup->items[2], config_));
    return std::vector<parse_outcome>(packets.size(), parse_outcome{outcome_kind::violation, {}, why, {}});
  }

  // The worker overran, died or spoke nonsense: it is replaced. Which packet caused it?
  const std::string tail = worker->stderr_tail();
  worker->kill();
  release(mandate, std::move(worker), false);
  if (packets.size() > 1) {
    std::vector<parse_outcome> out;
    for (std::size_t i = 0; i < packets.size(); ++i) {
      auto single = parse(mandate, code, limits, last_readings, packets.subspan(i, 1));
      out.push_back(std::move(single.front()));
    }
    return out;
  }
  parse_outcome failed;
  if (status == io_status::timeout) {
    failed.kind = outcome_kind::timeout;
    failed.message = "the worker did not answer in time and was replaced";
  } else if (tail.find("Cannot allocate") != std::string::npos || tail.find("memory") != std::string::npos) {
    failed.kind = outcome_kind::memory_limit;
    failed.message = "the worker ran out of memory and was replaced";
  } else if (status == io_status::died) {
    failed.kind = outcome_kind::crashed;
    failed.message = "the worker died and was replaced";
  } else {
    failed.kind = outcome_kind::protocol_error;
    failed.message = "the worker's answer was malformed" + (error.empty() ? std::string() : ": " + error);
  }
  spdlog::warn("sandbox worker replaced after {}: {}", outcome_name(failed.kind), tail.substr(0, 300));
  return {failed};
}

check_result worker_pool::check(const std::string& source) {
  const std::string request = etf::encode(etf::make_tuple({etf::make_atom("check"), etf::make_binary(source)}));
  const std::string lane = "__check__";
  auto worker = acquire(lane);
  std::string answer;
  const auto status = worker->call(request, clock::now() + config_.compile_budget + std::chrono::seconds(5), answer);
  std::optional<etf::term> decoded;
  if (status == io_status::ok) decoded = etf::decode(answer);
  const auto* tup = decoded ? decoded->as_tuple() : nullptr;
  check_result result;
  if (tup && tup->items.size() == 2 && tup->items[0].is_atom("checked")) {
    const auto* inner = tup->items[1].as_tuple();
    result.ok = inner && !inner->items.empty() && inner->items[0].is_atom("ok");
    if (!result.ok && inner && inner->items.size() == 2) result.problems = problems_of(&inner->items[1]);
    release(lane, std::move(worker), true);
    return result;
  }
  worker->kill();
  release(lane, std::move(worker), false);
  result.problems.emplace_back(std::nullopt, "checking failed: the worker did not answer properly");
  return result;
}

test_report worker_pool::test(const parser_code& code, const parse_limits& limits) {
  const std::string request = etf::encode(etf::make_tuple(
      {etf::make_atom("test"), etf::make_binary(code.key()), etf::make_binary(code.source), limits_term(limits)}));
  const std::string lane = "__test__";
  auto worker = acquire(lane);
  std::string answer;
  const auto status = worker->call(request, clock::now() + config_.compile_budget + std::chrono::seconds(60), answer);
  std::optional<etf::term> decoded;
  if (status == io_status::ok) decoded = etf::decode(answer);
  const auto* tup = decoded ? decoded->as_tuple() : nullptr;
  test_report report;
  if (tup && tup->items.size() == 3 && tup->items[0].is_atom("tested")) {
    report.compile.ok = true;
    const auto& body = tup->items[1];
    if (const auto* vectors = body.find("vectors"); vectors && vectors->as_list()) {
      for (const auto& v : *vectors->as_list()) {
        vector_result r;
        if (const auto* i = v.find("index"); i && i->as_int()) r.index = static_cast<int>(*i->as_int());
        r.kind = text_of(v.find("kind"));
        r.label = text_of(v.find("label"));
        r.status = text_of(v.find("status"));
        r.expected = text_of(v.find("expected"));
        r.actual = text_of(v.find("actual"));
        r.logs = lines_of(v.find("logs"));
        report.vectors.push_back(std::move(r));
      }
    }
    report.warnings = lines_of(body.find("warnings"));
    release(lane, std::move(worker), !worn_out(&tup->items[2], config_));
    return report;
  }
  if (tup && tup->items.size() == 3 && tup->items[0].is_atom("rejected")) {
    report.compile.problems = problems_of(&tup->items[1]);
    release(lane, std::move(worker), true);
    return report;
  }
  const std::string tail = worker->stderr_tail();
  worker->kill();
  release(lane, std::move(worker), false);
  report.compile.problems.emplace_back(
      std::nullopt, "testing failed: the worker " + std::string(status == io_status::timeout ? "timed out" : "died") +
                        (tail.empty() ? "" : ": " + tail.substr(0, 300)));
  return report;
}

}  // namespace fl::sandbox
