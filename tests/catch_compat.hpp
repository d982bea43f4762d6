#pragma once
// Catch2 v2 (Debian 12) and v3 (Ubuntu 24.04) behind one include.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define MGBENCH_CATCH_V3 1
#else
#include <catch2/catch.hpp>
#endif

#include <cmath>

// Approximate comparison that reads the same on both versions.
#if defined(MGBENCH_CATCH_V3)
using Catch::Approx;
#endif
