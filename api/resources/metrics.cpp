#include "api/resources/metrics.hpp"

#include "core/metrics.hpp"
#include "storage/engine_stats.hpp"

namespace fl::api {

namespace {

double num(auto n) {
  return static_cast<double>(n);
}

void write_http(metrics::exposition& out, const server_metrics& t) {
  out.family("fieldline_http_requests_total", "HTTP requests answered, by method, route template and status.",
             t.http.requests);
  out.family("fieldline_http_request_duration_seconds",
             "From the server's first read of a request to its answer's last byte written, by method and route "
             "template.",
             t.http.seconds);
  out.single_gauge("fieldline_websocket_subscribers", "Websockets following changes now.",
                   num(t.websockets.subscribers.value()));
  out.single_counter("fieldline_websocket_frames_sent_total", "Items (text frames) written to websockets.",
                     num(t.websockets.frames_sent.value()));
  out.single_counter("fieldline_websocket_overflow_closes_total",
                     "Websockets closed with 1008 because their send queue overflowed (a client reading too slowly).",
                     num(t.websockets.overflow_closes.value()));
}

void write_parsing(metrics::exposition& out, const app_context& app, pipeline::parse_load load) {
  const auto& m = app.parsing.metrics();
  out.single_counter("fieldline_packets_accepted_total", "Packets created and durable.",
                     num(app.packet_writes.packets_accepted()));
  out.single_counter(
      "fieldline_wal_syncs_total",
      "fsyncs of the write-ahead log by the group commit, failed ones included; each covers a group of writes.",
      num(app.durable.syncs()));
  out.single_histogram("fieldline_wal_commit_duration_seconds",
                       "From a write handed to the group commit to its fsync's end, when its caller is told it is "
                       "durable (a packet create waits this long for its answer, besides HTTP).",
                       app.durable.commit_seconds());
  out.single_histogram("fieldline_wal_fsync_duration_seconds", "One fsync of the write-ahead log by the group commit.",
                       app.durable.fsync_seconds());
  out.single_counter("fieldline_packets_parsed_total", "Packets given a parse outcome and written.",
                     num(m.parsed.value()));
  out.family("fieldline_parses_total",
             "Parse outcomes by mandate (the first 50 mandates seen; the rest as \"other\") and outcome.", m.outcomes);
  out.single_histogram("fieldline_parse_call_duration_seconds", "One sandbox call: a batch of one device's packets.",
                       m.call_seconds);
  out.single_counter("fieldline_parser_pauses_total",
                     "Parsers paused with back-off because they kept failing their deadline (degraded).",
                     num(m.pauses.value()));
  out.single_gauge("fieldline_parse_backlog_packets", "Packets waiting to be parsed (the in-memory backlog).",
                   num(load.queued_packets));
  out.single_gauge("fieldline_parse_backlog_devices", "Devices with packets waiting to be parsed.",
                   num(load.queued_devices));
  out.single_gauge("fieldline_parse_devices_in_progress", "Devices being parsed (or held by a reparse) now.",
                   num(load.devices_in_progress));
  out.single_gauge("fieldline_parse_workers", "Sandbox workers alive.", num(load.workers_live));
  out.single_gauge("fieldline_parse_workers_max", "The cap on sandbox workers (0 until the first parse).",
                   num(load.workers_max));
  out.single_gauge("fieldline_parse_worker_queue", "Parse calls waiting for a sandbox worker (all busy at the cap).",
                   num(load.workers_waiting));
  out.single_counter("fieldline_parse_worker_starts_total", "Sandbox workers booted.", num(load.workers_started));
  out.single_counter("fieldline_parse_worker_stops_total",
                     "Sandbox workers stopped for any reason (idle, recycled, evicted, failed).",
                     num(load.workers_stopped));
  out.single_counter("fieldline_parse_worker_restarts_total",
                     "Sandbox workers killed by a parse (deadline, crash, memory, protocol) and replaced (degraded).",
                     num(load.workers_failed));
}

void write_reparse(metrics::exposition& out, const pipeline::reparse_figures& f) {
  out.single_gauge("fieldline_reparse_jobs_waiting", "Reparse jobs queued (not begun, between batches, or in grace).",
                   num(f.jobs_waiting));
  out.single_gauge("fieldline_reparse_jobs_active", "Reparse jobs being worked on now.", num(f.jobs_active));
  out.single_counter("fieldline_reparse_jobs_started_total", "Reparse jobs started.", num(f.jobs_started));
  out.single_counter("fieldline_reparse_jobs_switched_total", "Reparse jobs whose new readings replaced the old ones.",
                     num(f.jobs_switched));
  out.single_counter("fieldline_reparse_jobs_failed_total", "Reparse jobs that failed (the device was deleted).",
                     num(f.jobs_failed));
  out.single_counter("fieldline_reparse_retries_total", "Reparse steps that failed and were retried (degraded).",
                     num(f.retries));
  out.single_counter("fieldline_reparse_packets_total", "Packets parsed again by reparse jobs.",
                     num(f.packets_reparsed));
}

void write_storage(metrics::exposition& out, const storage::engine_stats& s) {
  out.single_gauge("fieldline_rocksdb_live_sst_bytes", "Size of the live SST files.", num(s.live_sst_bytes));
  out.single_gauge("fieldline_rocksdb_sst_bytes", "Size of all SST files (obsolete ones not yet deleted included).",
                   num(s.total_sst_bytes));
  out.single_gauge("fieldline_rocksdb_memtable_bytes", "Size of the memtables.", num(s.memtable_bytes));
  out.single_gauge("fieldline_rocksdb_pending_compaction_bytes",
                   "Bytes compaction estimates it must rewrite to settle.", num(s.pending_compaction_bytes));
  out.single_gauge("fieldline_rocksdb_running_compactions", "Compactions running now.", num(s.running_compactions));
  out.single_gauge("fieldline_rocksdb_running_flushes", "Memtable flushes running now.", num(s.running_flushes));
  out.single_counter("fieldline_rocksdb_write_slowdowns_total",
                     "Times RocksDB slowed writes since the start: compaction or flushes fell behind (degraded).",
                     num(s.write_slowdowns));
  out.single_counter("fieldline_rocksdb_write_stops_total", "Times RocksDB stopped writes since the start (degraded).",
                     num(s.write_stops));
  out.single_gauge("fieldline_rocksdb_write_stopped", "1 while RocksDB stops writes.", s.write_stopped ? 1 : 0);
  out.single_gauge("fieldline_rocksdb_delayed_write_rate_bytes",
                   "The write rate RocksDB allows while it slows writes (0: not slowed).", num(s.delayed_write_rate));
  out.single_gauge("fieldline_memtable_chunks_kept_bytes",
                   "2 MiB memtable chunks kept ready for the writer (at most 128 MiB).",
                   num(s.memtable_chunks_kept_bytes));
  out.single_counter("fieldline_memtable_chunks_reused_total",
                     "2 MiB memtable chunks the writer took ready instead of mapping and filling its own.",
                     num(s.memtable_chunks_reused));
  out.single_counter("fieldline_memtable_chunks_prepared_total",
                     "2 MiB memtable chunks filled ahead by the background thread.", num(s.memtable_chunks_prepared));
}

void write_head_cache(metrics::exposition& out, const storage::head_cache_stats& s) {
  out.single_counter("fieldline_head_cache_hits_total",
                     "Reads of a device's newest readings that started in memory (the head cache).", num(s.hits));
  out.single_counter("fieldline_head_cache_misses_total", "Reads of a device's newest readings not in the head cache.",
                     num(s.misses));
  out.single_counter("fieldline_head_cache_fills_total", "Heads kept in memory after a read.", num(s.fills));
  out.single_counter("fieldline_head_cache_refused_fills_total",
                     "Heads not kept because a write touched them while they were read.", num(s.refused_fills));
  out.single_gauge("fieldline_head_cache_heads", "Devices (generations) whose newest readings are in memory.",
                   num(s.heads));
  out.single_gauge("fieldline_head_cache_bytes", "Memory held by the head cache.", num(s.bytes));
}

}  // namespace

http_response show_metrics(request_context& ctx) {
  metrics::exposition out;
  write_http(out, ctx.app.telemetry);
  write_parsing(out, ctx.app, ctx.app.parsing.load());
  write_reparse(out, ctx.app.reparse.figures());
  write_storage(out, ctx.records().db().stats());
  write_head_cache(out, ctx.records().db().head_stats());
  out.single_counter("fieldline_record_cache_hits_total",
                     "Catalog reads (keys, mandates, devices, parsers) answered from memory.",
                     num(ctx.records().cached_reads()));
  out.single_gauge("fieldline_record_cache_bytes", "Catalog documents held in memory.",
                   num(ctx.records().cached_bytes()));
  out.single_counter("fieldline_cached_gets_total",
                     "Reads of rarely written keys (devices' generation pointers) answered from memory.",
                     num(ctx.records().db().cached_gets()));
  http_response answer;
  answer.body = out.take();
  answer.content_type = std::string(metrics::exposition::content_type);
  return answer;
}

}  // namespace fl::api
