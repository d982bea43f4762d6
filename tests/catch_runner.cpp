// The Catch2 session, compiled once for every test binary: with Catch2 2 the whole framework
// is compiled in the file that defines CATCH_CONFIG_RUNNER, which took longer than any other
// file of the tests (Catch2 3 is a library already). catch_main.cpp, one per binary, calls it.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

int mgbench_run_catch(int argc, char** argv) { return Catch::Session().run(argc, argv); }
