// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "files.hpp"
#include "flopcast/io/fields.hpp"

namespace flopcast::cli {

using nlohmann::json;

/// Exit codes scripts can rely on.
enum ExitCode : int {
  kOk = 0,
  kInternal = 1,
  kUsage = 2,             ///< bad command line (CLI11)
  kInvalidRequest = 3,    ///< the request is invalid or asks for something not modelled
  kFileError = 4,         ///< a file could not be read
  kCeilingViolation = 5,  ///< `validate --check-ceilings`: a group got worse than its ceiling
};

/// A --request file: a request document, or a scenario preset (presets/scenarios/*.json) whose
/// "request" it returns.
json read_request_file(const std::string& path);
/// read_request_file for a command that runs one task (`serve`: "serving", `train`: "training",
/// `collective`): a file of another task is an error naming both, not a table that fails to
/// print.
json read_task_file(const std::string& path, const std::string& task, const std::string& command);

/// Records in `given` the first option of `sub` the user gave that is not one of `modes` (how to
/// run or print a request, not what it asks), once parsing ends. With --request such a flag would
/// be ignored; refuse_request_flags names it instead.
void note_request_flags(CLI::App& sub, std::string& given, std::vector<std::string> modes);
/// Throws when --request came with a flag that builds a request (note_request_flags).
void refuse_request_flags(const std::string& request_file, const std::string& given);

/// Where a request's model and hardware come from: exactly one model source (a preset id, a
/// model object file or a Hugging Face config.json) and one hardware source (id or file).
struct ModelHardwareFlags {
  std::string model, model_file, hf_config;
  std::string hardware, hardware_file;
  /// `--what-if KEY=X`: the preset with one of its figures scaled (`hardware.scale`).
  std::vector<std::string> what_if;
  /// The hardware comes from elsewhere (serve --search-hardware): no hardware flag may be given.
  bool hardware_elsewhere = false;
};
/// Adds `--what-if KEY=X` (repeatable) to a command that takes `--hardware`.
void add_what_if_option(CLI::App& app, std::vector<std::string>& what_if);
/// Sets r["model"] and r["hardware"] from the flags (r["task"] set first). A quantized Hugging
/// Face checkpoint's types go into the model (checkpoint_weights, the core's default precision);
/// a note on stderr says so unless a weights flag replaces them (training: that they do not apply).
void put_model_and_hardware(json& r, const ModelHardwareFlags& f, bool weights_flag,
                            bool attention_weights_flag);

/// One flag per request field of the registry (flopcast/io/fields.hpp): its name, type, help
/// and value list are the registry's, so a flag cannot drift from what the reader accepts.
class RequestFlags {
 public:
  /// Adds the flag of every field `task` (io::FieldTask) reads, in registry order.
  void add(CLI::App& app, unsigned task);
  /// Whether the flag of the field at `path` was given.
  [[nodiscard]] bool given(std::string_view path) const;
  /// Sets the field of every flag given in `r` (booleans on|off as true|false).
  void put(json& r) const;

 private:
  struct Slot {
    const io::RequestField* field = nullptr;
    std::optional<int> integer;
    std::optional<double> number;
    std::optional<std::string> text;
    bool on = false;
  };
  std::deque<Slot> slots_;  // CLI11 holds references into the slots
};

/// The scale-out network keys (`network.*`) of collective and training requests.
struct NetworkFlags {
  std::optional<int> nics_per_node;
  std::optional<double> nic_bandwidth_Gbps, latency_us;
};
/// Adds --nics-per-node, --nic-bandwidth-Gbps and --network-latency-us.
void add_network_options(CLI::App& app, NetworkFlags& n);
/// Sets r["network"][key] for every flag given.
void put_network(json& r, const NetworkFlags& n);

/// Flags that build a request (shared by `estimate` and `link`).
struct RequestOptions {
  std::string request_file;
  std::string scenario;      ///< a scenario preset's id: its request
  std::string setup;         ///< a setup preset's id (presets/setups): its request
  std::string request_flag;  ///< note_request_flags
  std::string model, model_file, hf_config;
  std::string hardware, hardware_file;
  std::vector<std::string> what_if;
  RequestFlags fields;  ///< every other inference field
};
void add_request_options(CLI::App& app, RequestOptions& o);
/// The request document: the --request file, or one built from the flags that were given
/// (defaults are left to the core, which has the only copy of them).
/// The request of the flags (or file, scenario, setup); with `hardware_elsewhere` the GPU comes
/// from another flag (--compare-gpus) and --hardware is refused.
json build_request(const RequestOptions& o, bool hardware_elsewhere = false);

struct EstimateOptions {
  RequestOptions request;
  std::string format = "table";
  /// --compare-gpus: "" or "all" for every hardware preset, else preset ids separated by commas.
  std::optional<std::string> compare_gpus;
};
void setup_estimate(CLI::App& app, EstimateOptions& o);
int run_estimate(const EstimateOptions& o);

struct LinkOptions {
  RequestOptions request;
  std::string base_url = "http://127.0.0.1:8080/";
};
void setup_link(CLI::App& app, LinkOptions& o);
int run_link(const LinkOptions& o);

struct PresetsOptions {
  std::string kind;
  std::string id;
  std::string format = "table";
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* schema = nullptr;
  bool docs = false;  ///< schema --docs
};
void setup_presets(CLI::App& app, PresetsOptions& o);
int run_presets(const PresetsOptions& o);

struct ValidateOptions {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string split = "all";
  std::vector<std::string> holdouts;
  std::string write_ceilings, check_ceilings;
  int max_tier = 2;
  std::string rows_file;
  bool by_source = false;  ///< leave-one-source-out report of the end-to-end rows
  std::string write_loso, check_loso;
  std::string write_bands;   ///< with by_source: the 80% bands file (presets/bands/e2e.json)
  std::string engine_folds;  ///< with by_source: engine overheads refitted per held-out source
  std::string explain;       ///< an end-to-end row id: print the request it became, and stop
};
void setup_validate(CLI::App& app, ValidateOptions& o);
int run_validate(const ValidateOptions& o);

/// The ground-truth files under `paths`: files as given, folders walked for *.csv and *.jsonl
/// (sorted, skipping raw/). FileError for a path that does not exist.
std::vector<std::string> expand_paths(const std::vector<std::string>& paths);

struct FitOptions {
  std::vector<std::string> paths;
  std::string out = "presets/calibration";
  int min_rows = 50;
  /// Fit the training kernel scale per GPU architecture (printed as JSON) instead.
  bool training = false;
  /// Fit vLLM's and SGLang's per-request API-server latency into their profiles instead.
  bool request_overhead = false;
  /// Fit the Tier-1 engine overheads (presets/engines/) instead of the kernel efficiencies.
  bool engines = false;
  /// Fit the collective fabric models (presets/collectives/fabrics.json, printed) instead.
  bool collectives = false;
  /// Refit every fitted engine without each source that has train rows of it, writing the
  /// overheads per source to this file (validation/engine_folds.json) instead.
  std::string engine_folds;
  /// With engine_folds: keep the folds the file holds, recompute only the gate.
  bool gate_only = false;
};
void setup_fit(CLI::App& app, FitOptions& o);
int run_fit(const FitOptions& o);
/// `fit --collectives`: prints the fabrics.json document (run_fit maps its errors).
int run_fit_collectives(const FitOptions& o);

struct ServeOptions {
  std::string request_file, model, model_file, hf_config, hardware, hardware_file;
  std::string request_flag;  ///< note_request_flags
  std::vector<std::string> what_if;
  RequestFlags fields;  ///< every serving request field with a flag of its own
  std::string draft;    ///< speculative draft: "mtp" or a model preset id
  bool simulate = false;
  std::string trace_file, per_request_file;
  bool search = false;            ///< task "search": the setups with the most capacity
  std::optional<int> search_top;  ///< setups listed (search.top)
  std::string slo_percentile;     ///< search.slo_percentile (p50, p90, p99)
  std::vector<std::string> search_weights, search_kv_cache;  ///< search.weights, search.kv_cache
  bool search_disaggregated = false;                         ///< search.disaggregated [false, true]
  bool fewest_gpus = false;  ///< search.fewest_gpus: the GPU count searched, --num-gpus its ceiling
  /// search.hardware as ID:GPUS:USD_PER_GPU_HOUR entries (GPU types compared at their prices).
  std::vector<std::string> search_hardware;
  std::string format = "table";
};
void setup_serve(CLI::App& app, ServeOptions& o);
int run_serve(const ServeOptions& o);

struct CollectiveOptions {
  std::string request_file, op, bytes, sweep, algorithm, hardware_file;
  std::string request_flag;  ///< note_request_flags
  std::string hardware = "h100-sxm";
  int ranks = 8;
  std::optional<int> gpus_per_node, max_tier;
  NetworkFlags network;
  std::string format = "table";
};

void setup_collective(CLI::App& app, CollectiveOptions& o);
int run_collective(const CollectiveOptions& o);

struct TrainOptions {
  std::string request_file, model_file, hf_config, hardware_file;
  std::string request_flag;  ///< note_request_flags
  std::vector<std::string> what_if;
  std::string model, hardware;
  // No defaults: a training estimate is of the run the user names (issue 11).
  std::optional<int> num_gpus, seq_len, global_batch_size;
  std::optional<int> gpus_per_node, tp, pp, dp, cp, ep, vpp, zero, micro_batch_size, lora_rank,
      mtp_layers, bf16_last_layers;
  std::optional<int> first_stage_layers, last_stage_layers;
  std::optional<int> max_tier;
  bool sp = false;
  std::string fsdp, recompute, precision, optimizer, lora, framework;
  std::optional<double> total_tokens, cost_per_gpu_hour_usd;
  // The keys that had needed --request (issue 11: every input as a flag).
  bool tp_comm_overlap = false;
  bool ep_comm_overlap = false;
  std::optional<std::string> flash_attention;  ///< on or off
  std::string grad_reduce, lora_targets;
  std::optional<double> moe_capacity_factor;
  std::optional<double> comm_overlap, step_overhead_ms, compute_scale, attention_scale, reserve_GB;
  NetworkFlags network;
  bool search = false;            ///< task "search": the fastest layouts instead of one estimate
  std::optional<int> search_top;  ///< layouts listed (search.top)
  std::vector<std::string> search_compute;  ///< search.compute (precision.compute types)
  std::string format = "table";
};
void setup_train(CLI::App& app, TrainOptions& o);
int run_train(const TrainOptions& o);

/// Human-readable renderings of a response.
std::string format_table(const json& response);
std::string format_csv(const json& response);

/// Prints an error (stderr; with --format json also an error object on stdout) and returns the
/// exit code for the exception being handled. Call inside a catch block.
int report_error(const std::string& format);

}  // namespace flopcast::cli
