// SPDX-License-Identifier: MIT
#include <iostream>

#include "commands.hpp"
#include "flopcast/io/api.hpp"

int main(int argc, char** argv) {
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
