// An ordinary shared library without the acccheck entry symbol.
extern "C" int not_a_plugin_answer() { return 42; }
