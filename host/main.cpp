// acccheck: the thin host. It knows the pipeline, the file formats and how to load plugins;
// operator names, devices and formulas live in plugins.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return acccheck::host::run_main(argc, argv); }
