// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flopcast/io/api.hpp"

namespace {

/// After a command-line error, a "did you mean" for a misspelled subcommand or option (CLI11
/// names the unexpected arguments only): `flopcast estimat` -> estimate, `--promt-tokens` ->
/// --prompt-tokens.
void suggest_fix(CLI::App& app, int argc, char** argv) {
  CLI::App* sub = nullptr;
  std::vector<std::string> commands;
  for (CLI::App* s : app.get_subcommands({})) {
    commands.push_back(s->get_name());
    if (s->parsed()) sub = s;
  }
  if (sub == nullptr) {
    if (argc > 1 && argv[1][0] != '-') {
      if (auto guess = flopcast::io::suggest(argv[1], commands)) {
        std::cerr << "flopcast: did you mean `flopcast " << *guess << "`?\n";
      }
    }
    return;
  }
  std::vector<std::string> names;
  for (const CLI::Option* o : sub->get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (auto guess = flopcast::io::suggest(name, names)) {
      std::cerr << "flopcast: " << name << " is not an option of `flopcast " << sub->get_name()
                << "`; did you mean " << *guess << "?\n";
    }
  }
}

int run_cli(int argc, char** argv) {
  using namespace flopcast::cli;
  CLI::App app{
      "flopcast: LLM inference, serving, training and collective performance and memory estimates "
      "from a model and GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", flopcast::io::version());

  EstimateOptions estimate;
  setup_estimate(app, estimate);
  LinkOptions link;
  setup_link(app, link);
  PresetsOptions presets;
  setup_presets(app, presets);
  ValidateOptions validate;
  setup_validate(app, validate);
  FitOptions fit;
  setup_fit(app, fit);
  ServeOptions serve;
  setup_serve(app, serve);
  CollectiveOptions collective;
  setup_collective(app, collective);
  TrainOptions train;
  setup_train(app, train);
  app.add_subcommand("version", "Print the version")->callback([] {
    std::cout << flopcast::io::version() << "\n";
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0) suggest_fix(app, argc, argv);
    return code == 0 ? kOk : kUsage;
  }
  if (app.got_subcommand("estimate")) return run_estimate(estimate);
  if (app.got_subcommand("link")) return run_link(link);
  if (app.got_subcommand("presets")) return run_presets(presets);
  if (app.got_subcommand("validate")) return run_validate(validate);
  if (app.got_subcommand("fit")) return run_fit(fit);
  if (app.got_subcommand("serve")) return run_serve(serve);
  if (app.got_subcommand("collective")) return run_collective(collective);
  if (app.got_subcommand("train")) return run_train(train);
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Each command reports its own errors; this catches what escapes building the command line
  // (an allocation failure, say), which would otherwise end the process without a word.
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fputs("flopcast: internal error: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
  } catch (...) {
    std::fputs("flopcast: internal error\n", stderr);
  }
  return flopcast::cli::kInternal;
}
