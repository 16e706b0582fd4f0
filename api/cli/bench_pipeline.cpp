// `fieldline bench ingest` and `fieldline bench query` (DESIGN.md, Performance), each against a
// baseline measured in the same run:
//   ingest: packets accepted over HTTP -> durable -> parsed -> queryable, vs synced raw RocksDB
//           writes of the same keys with the same concurrency;
//   query:  GET .../readings?limit=100 at N connections vs nginx serving a file of the same bytes,
//           and readings/s over /readings/stream.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "api/cli/bench_rig.hpp"
#include "api/cli/commands.hpp"
#include "api/cli/nginx_baseline.hpp"
#include "api/cli/progress.hpp"
#include "api/cli/wrk_load.hpp"
#include "api/cli/wrk_report.hpp"
#include "api/http/client.hpp"
#include "api/http/ndjson_reader.hpp"
#include "api/resources/api_keys.hpp"
#include "core/json_out.hpp"
#include "core/metrics.hpp"
#include "core/thread_name.hpp"
#include "pipeline/parse_records.hpp"
#include "sandbox/child_command.hpp"
#include "sandbox/child_process.hpp"
#include "storage/key_codec.hpp"
#include "storage/packets.hpp"
#include "storage/parse_queue.hpp"
#include "storage/readings.hpp"

namespace fl::cli {

namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

double since(clock::time_point start) {
  return std::chrono::duration<double>(clock::now() - start).count();
}

// ---- ingest ----

struct ingest_figures {
  std::size_t packets = 0;  // what wrk sent in its run
  double accepted_per_s = 0, ingested_per_s = 0, raw_put_per_s = 0, raw_accept_put_per_s = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;      // as wrk reports them (its p99 with its correction: wrk_report.hpp)
  double raw_put_p50_ms = 0, raw_put_p99_ms = 0;  // one synced write of the raw baseline, start to durable
  double raw_put_p99_as_wrk_ms = 0;               // the same writes counted as wrk counts its answers
  // The server's own view of the same requests (its histograms, interpolated within buckets): a
  // create from its first byte read to its answer's last written, the group commit's part of it,
  // and one fsync. What wrk's p99 adds to the first is time outside the server's request handling:
  // the request waiting in the socket for an I/O thread, and the client's own.
  double server_p99_ms = 0, commit_p99_ms = 0, fsync_p99_ms = 0;
  std::size_t failures = 0;
};

// The server's latency histograms that a packet create passes through, read at once.
struct accept_latencies {
  metrics::histogram::snapshot request, commit, fsync;

  static accept_latencies read(api::app_context& app) {
    return {app.telemetry.http.seconds.at({"POST", "/api/v1/devices/:device/packets"}).read(),
            app.durable.commit_seconds().read(), app.durable.fsync_seconds().read()};
  }
};

double p99_ms_between(const metrics::histogram::snapshot& later, const metrics::histogram::snapshot& earlier) {
  return metrics::quantile(metrics::difference(later, earlier), 0.99) * 1000;
}

// The raw baseline's rate and how long each of its synced writes took.
struct raw_puts {
  double per_s = 0, p50_ms = 0, p99_ms = 0, p99_as_wrk_ms = 0;
};

// What RocksDB alone can do with this work: for every packet one synced write of the keys the
// ingest puts for it, each once, with the documents it stored, from `connections` threads. With a
// reading: the packet, its id index, its parse-queue entry, the reading and its three index
// entries (everything accepted -> parsed -> queryable puts). Without: the first three only (what
// is put before the answer). Each thread waits for its write to be durable before the next, as
// each of wrk's connections waits for its answer: the writes' p99 is the disk's and RocksDB's own
// tail at this concurrency, the floor under the accept p99 in the same run.
raw_puts raw_put_rate(std::size_t packets, std::size_t connections, const json::object& packet,
                      const std::optional<json::object>& reading) {
  scratch_dir dir;
  auto db = storage::database::open({.dir = dir.path});
  if (!db) throw std::runtime_error(db.error().message);
  storage::packets store(**db);
  storage::parse_queue queue(**db);
  storage::readings readings(**db);
  const uuid mandate = uuid::random();
  std::vector<uuid> devices(connections);
  for (auto& d : devices) d = uuid::random();
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> took_ms(connections);  // each thread's own: no lock per write
  const auto start = clock::now();
  for (std::size_t c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      name_this_thread("bench-rawput");
      for (std::size_t i = next++; i < packets; i = next++) {
        const auto began = clock::now();
        const uuid id = uuid::random();
        const micros t = now_micros();
        auto batch = (*db)->batch();
        store.put(batch, mandate, id, {devices[c], t}, packet);
        queue.push(batch, {mandate, devices[c], t, id});
        if (reading) readings.put(batch, mandate, devices[c], 0, {uuid::random(), id, t, t, *reading});
        if (!(*db)->write(batch, storage::durability::synced)) std::abort();
        took_ms[c].push_back(since(began) * 1000);
      }
    });
  }
  for (auto& t : threads) t.join();
  load_result all;
  all.seconds = since(start);
  for (auto& mine : took_ms) all.latencies_ms.insert(all.latencies_ms.end(), mine.begin(), mine.end());
  // wrk's interval: its run time over the requests of one connection (whole requests, as wrk divides).
  const auto per_thread = std::max<std::size_t>(all.latencies_ms.size() / connections, 1);
  load_result as_wrk{all.seconds,
                     as_wrk_counts(all.latencies_ms, all.seconds * 1000 / static_cast<double>(per_thread))};
  return {all.per_second(), all.percentile_ms(0.5), all.percentile_ms(0.99), as_wrk.percentile_ms(0.99)};
}

// Packets from `connections` clients, one device each, spread over `mandates` mandates that each
// have a parser of their own (the same library parser, each a distinct version: compiled per
// mandate, in that mandate's own sandbox worker). Keys travel as ?auth= since devices of several
// mandates share the clients' headers.
ingest_figures measure_ingest(std::size_t seconds, std::size_t connections, std::size_t mandates, progress& steps) {
  steps.set_note("set-up, " + std::to_string(mandates) + " mandate(s)");
  bench_server server;
  mandates = std::clamp<std::size_t>(mandates, 1, connections);
  struct tenant_setup {
    std::string key, folder, parser;
  };
  std::vector<tenant_setup> tenants;
  for (std::size_t m = 0; m < mandates; ++m) {
    const auto [mandate, key] = server.tenant();
    const std::string code = library_parser("temperature_humidity.ex") + "\n# mandate " + std::to_string(m) + "\n";
    const std::string parser(
        server
            .call("POST", "/admin/v1/mandates/" + mandate + "/parsers", server.superadmin,
                  to_json(json::object{{"parser", json::object{{"name", "th"}, {"language", "ex"}, {"code", code}}}}))
            .at("id")
            .as_string());
    const std::string folder(server.call("POST", "/api/v1/tags", key, R"({"tag":{"name":"B"}})").at("id").as_string());
    tenants.push_back({key, folder, parser});
  }
  std::vector<std::string> devices, targets;
  for (std::size_t c = 0; c < connections; ++c) {
    const auto& t = tenants[c % mandates];
    devices.push_back(make_device(server, t.key, t.folder, "d" + std::to_string(c), t.parser));
    targets.push_back("/api/v1/devices/" + devices.back() + "/packets?auth=" + t.key);
  }
  const std::string& key = tenants[0].key;
  const std::string body =
      R"({"packet":{"payload_encoding":"binary","payload":"08FC17700BB8","meta":{"frame_port":1}}})";

  const std::vector<std::pair<std::string, std::string>> headers{{"content-type", "application/json"}};
  const auto post = [&](std::size_t c, std::size_t) { return request_spec{"POST", targets[c], body}; };
  // Steady state, not start-up: one packet per device first, parsed before the clock starts, boots
  // the sandbox workers and compiles the parser in them (once per server and mandate, ~0.3-1 s of CPU).
  if (run_load(server.port(), connections, connections, headers, post).failures ||
      !server.app().parsing.wait_idle(std::chrono::minutes(1)))
    throw std::runtime_error("warm-up failed");

  steps.add();
  steps.set_note("ingest, " + std::to_string(mandates) + " mandate(s)");
  ingest_figures f;
  const auto before = accept_latencies::read(server.app());
  const auto start = clock::now();
  const auto load = run_wrk({.url = "http://127.0.0.1:" + std::to_string(server.port()) + targets[0],
                             .connections = connections,
                             .seconds = seconds,
                             .lua_script = post_script(targets, body),
                             .threads = latency_wrk_threads(connections)});
  f.packets = load.requests;
  f.accepted_per_s = load.requests_per_s;
  f.p50_ms = load.p50_ms;
  f.p99_ms = load.p99_ms;
  f.max_ms = load.max_ms;
  f.failures = load.failures();
  if (!server.app().parsing.wait_idle(std::chrono::minutes(10))) throw std::runtime_error("parsing did not finish");
  f.ingested_per_s = static_cast<double>(f.packets) / since(start);
  const auto after = accept_latencies::read(server.app());  // the parse commits are after_sync waits
  f.server_p99_ms = p99_ms_between(after.request, before.request);
  f.commit_p99_ms = p99_ms_between(after.commit, before.commit);
  f.fsync_p99_ms = p99_ms_between(after.fsync, before.fsync);
  const std::size_t packets = std::max<std::size_t>(f.packets, 1);
  steps.add();
  steps.set_note("raw RocksDB puts of the same keys");
  // Spot check: the readings are there. The baseline stores these very documents.
  const auto readings = server.call("GET", "/api/v1/devices/" + devices[0] + "/readings?limit=1", key);
  if (readings.as_array().size() != 1) throw std::runtime_error("no readings after ingest");
  // The load reached every device (wrk's script spreads it), beyond the warm-up's one packet each.
  for (std::size_t c = 0; c < devices.size(); ++c) {
    const auto& owner = tenants[c % mandates].key;
    if (server.call("GET", "/api/v1/devices/" + devices[c] + "/packets?limit=2", owner).as_array().size() != 2)
      throw std::runtime_error("the load did not reach device " + devices[c]);
  }
  const auto& reading = readings.as_array()[0].as_object();
  const auto packet = server.call(
      "GET", "/api/v1/devices/" + devices[0] + "/packets/" + std::string(reading.at("packet_id").as_string()), key);
  const auto raw = raw_put_rate(packets, connections, packet.as_object(), reading);
  f.raw_put_per_s = raw.per_s;
  f.raw_put_p50_ms = raw.p50_ms;
  f.raw_put_p99_ms = raw.p99_ms;
  f.raw_put_p99_as_wrk_ms = raw.p99_as_wrk_ms;
  f.raw_accept_put_per_s = raw_put_rate(packets, connections, packet.as_object(), std::nullopt).per_s;
  steps.add();
  return f;
}

// `--mandates N`: the same load spread over N mandates, measured after the single-mandate run, as a
// ratio to it (the cost of one sandbox worker per mandate).
int bench_ingest_mandates(bool as_json, std::size_t seconds, std::size_t connections, std::size_t mandates) {
  progress steps("bench ingest", "steps", 7);
  const auto single = measure_ingest(seconds, connections, 1, steps);
  const auto spread = measure_ingest(seconds, connections, mandates, steps);
  steps.set_note("generator ceiling");
  std::string ceiling_error;
  const auto ceiling = generator_ceiling(connections, seconds, ceiling_error, latency_wrk_threads(connections));
  steps.add();
  steps.finish();
  const double ratio = spread.ingested_per_s / single.ingested_per_s;
  if (as_json) {
    std::printf("%s\n", to_json(json::object{{"benchmark", "ingest_mandates"},
                                             {"cores", std::thread::hardware_concurrency()},
                                             {"load_generator", "wrk"},
                                             {"wrk_threads", latency_wrk_threads(connections)},
                                             {"seconds_per_figure", seconds},
                                             {"connections", connections},
                                             {"mandates", mandates},
                                             {"single_mandate_packets", single.packets},
                                             {"single_mandate_ingested_per_s", single.ingested_per_s},
                                             {"single_mandate_accept_p99_ms", single.p99_ms},
                                             {"mandates_packets", spread.packets},
                                             {"mandates_ingested_per_s", spread.ingested_per_s},
                                             {"mandates_accept_p99_ms", spread.p99_ms},
                                             {"mandates_vs_single", ratio},
                                             {"generator_ceiling", ceiling_json(ceiling)},
                                             {"failures", single.failures + spread.failures}})
                            .c_str());
  } else {
    std::printf(
        "fieldline bench ingest --mandates %zu  (%u cores, wrk with %zu thread(s), %zu s per run, %zu connections)\n",
        mandates, std::thread::hardware_concurrency(), latency_wrk_threads(connections), seconds, connections);
    std::printf("  ingested, 1 mandate                  %11.0f packets/s  (accept p99 %.1f ms)\n",
                single.ingested_per_s, single.p99_ms);
    std::printf("  ingested, %3zu mandates, own parsers  %11.0f packets/s  (accept p99 %.1f ms)\n", mandates,
                spread.ingested_per_s, spread.p99_ms);
    std::printf("  %zu mandates / 1 mandate             %12.3f   (target 0.70)\n", mandates, ratio);
    print_ceiling(ceiling, ceiling_error);
  }
  return single.failures + spread.failures == 0 ? 0 : 1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// `--runs N`: N measurements, each on a fresh server with its own baseline right after it. On a
// machine whose speed moves between runs (this VM: ±15-25%), the median of same-run ratios says
// more than any one run; the figures printed in full are the run with the median ratio.
struct ingest_runs {
  std::vector<ingest_figures> all;
  std::size_t median_run = 0;
  double median_ratio = 0, median_p99_ms = 0, median_raw_put_p99_ms = 0, median_server_p99_ms = 0;
  double median_raw_put_p99_as_wrk_ms = 0;
  double min_ratio = 0, max_ratio = 0, min_p99_ms = 0, max_p99_ms = 0;
};

ingest_runs measure_ingest_runs(std::size_t runs, std::size_t seconds, std::size_t connections, progress& steps) {
  ingest_runs out;
  std::vector<double> ratios, p99s, raw_p99s, raw_p99s_as_wrk, server_p99s;
  for (std::size_t r = 0; r < runs; ++r) {
    out.all.push_back(measure_ingest(seconds, connections, 1, steps));
    ratios.push_back(out.all.back().ingested_per_s / out.all.back().raw_put_per_s);
    p99s.push_back(out.all.back().p99_ms);
    raw_p99s.push_back(out.all.back().raw_put_p99_ms);
    raw_p99s_as_wrk.push_back(out.all.back().raw_put_p99_as_wrk_ms);
    server_p99s.push_back(out.all.back().server_p99_ms);
  }
  out.median_ratio = median(ratios);
  out.median_p99_ms = median(p99s);
  out.median_raw_put_p99_ms = median(raw_p99s);
  out.median_raw_put_p99_as_wrk_ms = median(raw_p99s_as_wrk);
  out.median_server_p99_ms = median(server_p99s);
  std::tie(out.min_ratio, out.max_ratio) =
      std::pair{*std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end())};
  std::tie(out.min_p99_ms, out.max_p99_ms) =
      std::pair{*std::min_element(p99s.begin(), p99s.end()), *std::max_element(p99s.begin(), p99s.end())};
  for (std::size_t r = 0; r < runs; ++r)
    if (std::abs(ratios[r] - out.median_ratio) < std::abs(ratios[out.median_run] - out.median_ratio))
      out.median_run = r;
  return out;
}

json::array runs_json(const ingest_runs& runs) {
  json::array out;
  for (const auto& f : runs.all)
    out.push_back(json::object{{"accepted_per_s", f.accepted_per_s},
                               {"accept_p50_ms", f.p50_ms},
                               {"accept_p99_ms", f.p99_ms},
                               {"accept_max_ms", f.max_ms},
                               {"ingested_per_s", f.ingested_per_s},
                               {"raw_put_per_s", f.raw_put_per_s},
                               {"raw_put_p99_ms", f.raw_put_p99_ms},
                               {"raw_put_p99_as_wrk_ms", f.raw_put_p99_as_wrk_ms},
                               {"server_accept_p99_ms", f.server_p99_ms},
                               {"group_commit_p99_ms", f.commit_p99_ms},
                               {"fsync_p99_ms", f.fsync_p99_ms},
                               {"ingest_vs_raw_put", f.ingested_per_s / f.raw_put_per_s},
                               {"failures", f.failures}});
  return out;
}

int bench_ingest(bool as_json, std::size_t seconds, std::size_t connections, std::size_t mandates,
                 std::size_t run_count) {
  require_wrk();
  if (mandates > 1) return bench_ingest_mandates(as_json, seconds, connections, mandates);
  progress steps("bench ingest", "steps", 3 * run_count + 1);
  const auto runs = measure_ingest_runs(run_count, seconds, connections, steps);
  const auto& f = runs.all[runs.median_run];
  std::size_t failures = 0;
  for (const auto& r : runs.all) failures += r.failures;
  steps.set_note("generator ceiling");
  std::string ceiling_error;
  const auto ceiling = generator_ceiling(connections, seconds, ceiling_error, latency_wrk_threads(connections));
  steps.add();
  steps.finish();
  const auto limits = bench_server::limits();
  const double ratio = f.ingested_per_s / f.raw_put_per_s;
  const double accept_ratio = f.ingested_per_s / f.raw_accept_put_per_s;
  if (as_json) {
    std::printf("%s\n", to_json(json::object{{"benchmark", "ingest"},
                                             {"cores", std::thread::hardware_concurrency()},
                                             {"load_generator", "wrk"},
                                             {"wrk_threads", latency_wrk_threads(connections)},
                                             {"seconds_per_figure", seconds},
                                             {"packets", f.packets},
                                             {"connections", connections},
                                             {"io_threads", limits.threads},
                                             {"write_threads", limits.write_threads},
                                             {"accepted_per_s", f.accepted_per_s},
                                             {"accept_p50_ms", f.p50_ms},
                                             {"accept_p99_ms", f.p99_ms},
                                             {"accept_max_ms", f.max_ms},
                                             {"ingested_per_s", f.ingested_per_s},
                                             {"raw_put_per_s", f.raw_put_per_s},
                                             {"raw_put_p50_ms", f.raw_put_p50_ms},
                                             {"raw_put_p99_ms", f.raw_put_p99_ms},
                                             {"raw_put_p99_as_wrk_ms", f.raw_put_p99_as_wrk_ms},
                                             {"server_accept_p99_ms", f.server_p99_ms},
                                             {"group_commit_p99_ms", f.commit_p99_ms},
                                             {"fsync_p99_ms", f.fsync_p99_ms},
                                             {"ingest_vs_raw_put", ratio},
                                             {"raw_accept_put_per_s", f.raw_accept_put_per_s},
                                             {"ingest_vs_raw_accept_put", accept_ratio},
                                             {"generator_ceiling", ceiling_json(ceiling)},
                                             {"runs", runs_json(runs)},
                                             {"median_ingest_vs_raw_put", runs.median_ratio},
                                             {"median_accept_p99_ms", runs.median_p99_ms},
                                             {"median_raw_put_p99_ms", runs.median_raw_put_p99_ms},
                                             {"median_raw_put_p99_as_wrk_ms", runs.median_raw_put_p99_as_wrk_ms},
                                             {"median_server_accept_p99_ms", runs.median_server_p99_ms},
                                             {"failures", failures}})
                            .c_str());
  } else {
    std::printf(
        "fieldline bench ingest  (%u cores, wrk with %zu thread(s), %zu s, %zu packets, %zu connections, %d I/O + %d "
        "write threads)\n",
        std::thread::hardware_concurrency(), latency_wrk_threads(connections), seconds, f.packets, connections,
        limits.threads, limits.write_threads);
    std::printf(
        "  accepted (durable, answered)        %12.0f packets/s  (p50 %.1f ms, p99 %.1f ms as wrk counts, target < 10; "
        "max %.1f ms)\n",
        f.accepted_per_s, f.p50_ms, f.p99_ms, f.max_ms);
    std::printf(
        "  the server's own p99 of the same     %11.1f ms         (first byte read to answer written; "
        "group commit %.1f ms, one fsync %.1f ms)\n",
        f.server_p99_ms, f.commit_p99_ms, f.fsync_p99_ms);
    std::printf("  ingested (accepted+parsed+queryable) %11.0f packets/s\n", f.ingested_per_s);
    std::printf(
        "  raw RocksDB synced puts, same keys   %11.0f packets/s  (packet + reading keys; "
        "each write p50 %.1f ms, p99 %.1f ms, %.1f ms as wrk counts)\n",
        f.raw_put_per_s, f.raw_put_p50_ms, f.raw_put_p99_ms, f.raw_put_p99_as_wrk_ms);
    std::printf("  ingest / raw put                    %12.3f   (target 0.70, issue 14)\n", ratio);
    std::printf("  raw puts of the accept keys only     %11.0f packets/s  (packet, id index, queue entry)\n",
                f.raw_accept_put_per_s);
    std::printf("  ingest / raw accept put             %12.3f\n", accept_ratio);
    print_ceiling(ceiling, ceiling_error);
    if (runs.all.size() > 1) {
      std::printf(
          "  over %zu runs (above: the median one)   ingest / raw put median %.3f (%.3f-%.3f), "
          "accept p99 median %.1f ms (%.1f-%.1f), the server's own %.1f ms, raw put p99 median %.1f ms (%.1f ms as "
          "wrk counts)\n",
          runs.all.size(), runs.median_ratio, runs.min_ratio, runs.max_ratio, runs.median_p99_ms, runs.min_p99_ms,
          runs.max_p99_ms, runs.median_server_p99_ms, runs.median_raw_put_p99_ms, runs.median_raw_put_p99_as_wrk_ms);
    }
    if (failures) std::printf("  failed requests                     %12zu\n", failures);
  }
  return failures == 0 ? 0 : 1;
}

// ---- query ----

// Resolving a key per request: from the principal cache (what the router does) against reading the
// store each time (authenticate(), what it did before the cache), in the same process. Member keys
// also compile their groups' regexes on a store read, so the gap is larger for them.
struct auth_figures {
  double cached_us = 0, store_us = 0;
};

auth_figures measure_authentication(api::app_context& app, const std::string& key) {
  constexpr int rounds = 200'000;
  const auto timed = [&](auto resolve) {
    const auto start = clock::now();
    for (int i = 0; i < rounds; ++i)
      if (!resolve()) throw std::runtime_error("the benchmark key did not resolve");
    return since(start) * 1e6 / rounds;
  };
  auth_figures out;
  out.store_us = timed([&] { return api::authenticate(app.records, app.token_key, key).has_value(); });
  out.cached_us = timed([&] { return app.principals.resolve(key).has_value(); });
  return out;
}

// The stream read by curl into /dev/null, the client issue 14 names as not the bottleneck: seconds
// for the whole body, nullopt when curl is missing, fails, or receives other bytes than `bytes`.
std::optional<double> curl_stream_seconds(std::uint16_t port, const std::string& target, const std::string& key,
                                          std::size_t bytes) {
  const auto curl = sandbox::find_program("curl");
  if (!curl) return std::nullopt;
  const auto run =
      sandbox::run_command(*curl, {"-s", "-o", "/dev/null", "-w", "%{size_download} %{time_total}", "-H",
                                   "x-api-key: " + key, "http://127.0.0.1:" + std::to_string(port) + target});
  std::size_t received = 0;
  double seconds = 0;
  if (run.exit_code != 0 || std::sscanf(run.output.c_str(), "%zu %lf", &received, &seconds) != 2 || received != bytes ||
      seconds <= 0)
    return std::nullopt;
  return seconds;
}

int bench_query(bool as_json, std::size_t seconds, std::size_t connections, std::size_t stream_readings,
                std::size_t head_cache_bytes) {
  require_wrk();
  progress steps("bench query", "steps", 6);
  steps.set_note("seeding readings");
  bench_server server(head_cache_bytes);
  const auto limits = bench_server::limits();
  const auto [mandate, key] = server.tenant();
  const std::string folder(server.call("POST", "/api/v1/tags", key, R"({"tag":{"name":"Q"}})").at("id").as_string());
  const std::string paged = make_device(server, key, folder, "paged", {});
  const std::string streamed = make_device(server, key, folder, "streamed", {});
  // Readings written as the pipeline writes them (one generation), straight into storage.
  const uuid m = *uuid::parse(mandate);
  for (const auto& [device, count] : {std::pair{paged, std::size_t{10'000}}, std::pair{streamed, stream_readings}}) {
    const uuid d = *uuid::parse(device);
    const micros start = 1'700'000'000'000'000;
    for (std::size_t done = 0; done < count;) {
      auto batch = server.db().batch();
      for (std::size_t i = 0; i < 10'000 && done < count; ++i, ++done) {
        storage::new_reading r{
            uuid::random(), uuid::random(), start + static_cast<micros>(done) * 1'000'000, start, {}};
        r.doc = pipeline::reading_document(r, d, std::nullopt, nullptr,
                                           json::object{{"temperature", 21.5}, {"humidity", 48}, {"battery", 3.1}});
        server.app().readings.put(batch, m, d, 0, r);
      }
      if (!server.db().write(batch, storage::durability::buffered)) throw std::runtime_error("seeding failed");
    }
  }
  steps.set_note("letting compaction settle");
  server.settle_storage();
  const std::string page_target = "/api/v1/devices/" + paged + "/readings?limit=100";
  api::http_client probe("127.0.0.1", server.port());
  const std::string page_body = probe.request("GET", page_target, {}, {{"x-api-key", key}}).body;
  steps.update(1);

  // All three with the same generator, connections and length, one after the other.
  steps.set_note("readings page");
  const auto ours = run_wrk({.url = "http://127.0.0.1:" + std::to_string(server.port()) + page_target,
                             .connections = connections,
                             .seconds = seconds,
                             .headers = {{"x-api-key", key}}});
  steps.update(2);
  std::optional<wrk_report> nginx_page, ceiling;
  std::string nginx_error;
  try {
    nginx_process nginx(page_body);
    steps.set_note("nginx, same bytes");
    nginx_page = run_wrk({.url = nginx.url("/page.json"), .connections = connections, .seconds = seconds});
    steps.update(3);
    steps.set_note("generator ceiling (nginx, 3 bytes)");
    ceiling = run_wrk({.url = nginx.url("/tiny.txt"), .connections = connections, .seconds = seconds});
    steps.update(4);
  } catch (const wrk_missing&) {
    throw;
  } catch (const std::exception& e) {
    nginx_error = e.what();
  }

  steps.set_note("stream");
  const auto start = clock::now();
  const auto stream = api::read_stream(server.port(), "/api/v1/devices/" + streamed + "/readings/stream", key);
  const double stream_s = since(start);
  const double stream_rate = static_cast<double>(stream.lines) / stream_s;
  const auto curl_s =
      curl_stream_seconds(server.port(), "/api/v1/devices/" + streamed + "/readings/stream", key, stream.bytes);
  const double curl_rate = curl_s ? static_cast<double>(stream.lines) / *curl_s : 0.0;
  steps.update(5);

  steps.set_note("key resolution");
  const auto resolving = measure_authentication(server.app(), key);
  steps.update(6);
  steps.finish();

  const auto heads = server.db().head_stats();  // the pages' reads: from memory or from RocksDB
  json::object result{{"benchmark", "query"},
                      {"cores", std::thread::hardware_concurrency()},
                      {"load_generator", "wrk"},
                      {"wrk_threads", wrk_threads(connections)},
                      {"connections", connections},
                      {"seconds_per_figure", seconds},
                      {"io_threads", limits.threads},
                      {"write_threads", limits.write_threads},
                      {"page_bytes", page_body.size()},
                      {"readings_page", load_figures(ours)},
                      {"nginx_static_file", nginx_page ? json::value(load_figures(*nginx_page)) : json::value(nullptr)},
                      {"generator_ceiling", ceiling ? json::value(load_figures(*ceiling)) : json::value(nullptr)},
                      {"stream_readings", stream.lines},
                      {"stream_seconds", stream_s},
                      {"stream_readings_per_s", stream_rate},
                      {"stream_into_curl_readings_per_s", curl_s ? json::value(curl_rate) : json::value(nullptr)},
                      {"auth_cached_us", resolving.cached_us},
                      {"auth_store_us", resolving.store_us},
                      {"head_cache_bytes", head_cache_bytes},
                      {"head_cache_hits", heads.hits},
                      {"head_cache_misses", heads.misses}};
  if (!nginx_error.empty()) result["nginx_error"] = nginx_error;
  result["page_vs_nginx_rps"] =
      nginx_page ? json::value(ours.requests_per_s / nginx_page->requests_per_s) : json::value(nullptr);
  // Near 1: nginx was held back by the generator, and so is the ratio above.
  result["nginx_vs_ceiling_rps"] =
      nginx_page && ceiling ? json::value(nginx_page->requests_per_s / ceiling->requests_per_s) : json::value(nullptr);
  if (as_json) {
    std::printf("%s\n", to_json(result).c_str());
  } else {
    std::printf(
        "fieldline bench query  (%u cores, %zu connections, wrk with %zu threads, %zu s per figure, %d I/O threads)\n",
        std::thread::hardware_concurrency(), connections, wrk_threads(connections), seconds, limits.threads);
    std::printf("  readings page (limit=100, %zu bytes) %10.0f req/s  p50 %.2f ms  p99 %.2f ms (target < 10)\n",
                page_body.size(), ours.requests_per_s, ours.p50_ms, ours.p99_ms);
    std::printf("  head cache (%zu bytes): %llu reads from memory, %llu from RocksDB\n", head_cache_bytes,
                static_cast<unsigned long long>(heads.hits), static_cast<unsigned long long>(heads.misses));
    if (nginx_page && ceiling) {
      std::printf("  nginx, static file of the same size  %10.0f req/s  p50 %.2f ms  p99 %.2f ms\n",
                  nginx_page->requests_per_s, nginx_page->p50_ms, nginx_page->p99_ms);
      std::printf("  generator ceiling (nginx, 3 bytes)   %10.0f req/s  p50 %.2f ms  p99 %.2f ms\n",
                  ceiling->requests_per_s, ceiling->p50_ms, ceiling->p99_ms);
      std::printf("  page / nginx (req/s)                %11.3f\n", result["page_vs_nginx_rps"].as_double());
      std::printf("  nginx / generator ceiling           %11.3f   (near 1: the baseline is capped by wrk)\n",
                  result["nginx_vs_ceiling_rps"].as_double());
    } else {
      std::printf("  nginx baseline unavailable: %s\n", nginx_error.c_str());
    }
    std::printf("  stream: %zu readings in %.2f s      %10.0f readings/s (target 1500000)\n", stream.lines, stream_s,
                stream_rate);
    if (curl_s) {
      std::printf("  the same into curl > /dev/null: %.2f s %9.0f readings/s\n", *curl_s, curl_rate);
    } else {
      std::printf("  the same into curl > /dev/null: unavailable (curl missing or other bytes)\n");
    }
    std::printf("  key -> principal: cache %.2f us, store %.2f us per request (%.1fx)\n", resolving.cached_us,
                resolving.store_us, resolving.store_us / resolving.cached_us);
  }
  return ours.failures() == 0 && stream.lines == stream_readings ? 0 : 1;
}

}  // namespace

void add_pipeline_benchmarks(CLI::App& bench) {
  struct args {
    bool json = false;
    std::size_t connections = 64, seconds = 5, stream_readings = 300'000, mandates = 1, runs = 1;
    std::size_t head_cache_bytes = api::serve_config{}.head_cache_bytes;
  };
  auto a = std::make_shared<args>();
  auto* ingest = bench.add_subcommand("ingest", "Packets over HTTP to queryable readings vs raw RocksDB puts");
  ingest->add_flag("--json", a->json, "Print the figures as one JSON object");
  ingest->add_option("--seconds", a->seconds, "Length of the wrk run (and of the generator-ceiling run)")
      ->capture_default_str();
  ingest->add_option("--connections", a->connections, "Concurrent client connections")->capture_default_str();
  ingest
      ->add_option("--mandates", a->mandates,
                   "Spread the devices over this many mandates, each with its own parser, and compare with one")
      ->capture_default_str();
  ingest
      ->add_option("--runs", a->runs,
                   "Measure this many times (fresh server, own baseline each) and report the median ratio")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  ingest->callback([a] { std::exit(bench_ingest(a->json, a->seconds, a->connections, a->mandates, a->runs)); });

  auto* query = bench.add_subcommand("query", "Readings pages vs nginx serving the same bytes; stream rate");
  query->add_flag("--json", a->json, "Print the figures as one JSON object");
  query->add_option("--seconds", a->seconds, "Length of each wrk run (readings page, nginx, generator ceiling)")
      ->capture_default_str();
  query->add_option("--connections", a->connections, "Concurrent client connections")->capture_default_str();
  query->add_option("--stream-readings", a->stream_readings, "Readings in the streamed device")->capture_default_str();
  query
      ->add_option("--head-cache-bytes", a->head_cache_bytes,
                   "The storage's head cache, as serve's key (0: off, every page read from RocksDB)")
      ->capture_default_str();
  query->callback(
      [a] { std::exit(bench_query(a->json, a->seconds, a->connections, a->stream_readings, a->head_cache_bytes)); });
}

}  // namespace fl::cli
