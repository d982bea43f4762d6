// Typed point parameters: the typed readers and their errors, choice of an enumerator, the
// canonical text (the same bytes nlohmann::json writes), validation at the JSON edge, and the
// kinds and command-line text of one value.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/params.hpp"

namespace {

using mgbench::Json;
using mgbench::ParamValue;
using mgbench::Params;

// The message of the UsageError `read` throws ("" when it throws none).
template <typename Read>
std::string usage_error(Read read) {
  try {
    (void)read();
  } catch (const mgbench::UsageError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const Params kPoint{{"bytes", 4096}, {"impl", "nccl"}, {"inplace", true}, {"overlap", false}};

enum class Impl { cublas, mgbench, nccl };

Impl impl_of(const Params& p) {
  return p.choice<Impl>("impl",
                        {{"cublas", Impl::cublas}, {"mgbench", Impl::mgbench}, {"nccl", Impl::nccl}});
}

}  // namespace

TEST_CASE("params: the typed readers return integers, text and booleans", "[params]") {
  CHECK(kPoint.integer("bytes") == 4096);
  CHECK(kPoint.text("impl") == "nccl");
  CHECK(kPoint.boolean("inplace"));
  CHECK_FALSE(kPoint.boolean("overlap"));
  CHECK(kPoint.str("bytes") == "4096");
  CHECK(kPoint.str("inplace") == "true");
}

TEST_CASE("params: a typed reader refuses a missing parameter by name", "[params]") {
  CHECK_THROWS_AS(kPoint.integer("absent_param"), mgbench::UsageError);
  CHECK_THROWS_AS(kPoint.text("absent_param"), mgbench::UsageError);
  CHECK_THROWS_AS(kPoint.boolean("absent_param"), mgbench::UsageError);
  CHECK(contains(usage_error([] { return kPoint.integer("absent_param"); }), "absent_param"));
  CHECK(contains(usage_error([] { return kPoint.text("absent_param"); }), "absent_param"));
  CHECK(contains(usage_error([] { return kPoint.boolean("absent_param"); }), "absent_param"));
}

TEST_CASE("params: a typed reader refuses a parameter of another kind by name", "[params]") {
  CHECK_THROWS_AS(kPoint.integer("impl"), mgbench::UsageError);
  CHECK_THROWS_AS(kPoint.text("bytes"), mgbench::UsageError);
  CHECK_THROWS_AS(kPoint.boolean("bytes"), mgbench::UsageError);
  CHECK(contains(usage_error([] { return kPoint.integer("impl"); }), "impl"));
  CHECK(contains(usage_error([] { return kPoint.text("bytes"); }), "bytes"));
  CHECK(contains(usage_error([] { return kPoint.boolean("bytes"); }), "bytes"));
  CHECK(contains(usage_error([] { return kPoint.integer("inplace"); }), "inplace"));
}

TEST_CASE("params: choice maps each name to its enumerator", "[params]") {
  CHECK(impl_of(Params{{"impl", "cublas"}}) == Impl::cublas);
  CHECK(impl_of(Params{{"impl", "mgbench"}}) == Impl::mgbench);
  CHECK(impl_of(Params{{"impl", "nccl"}}) == Impl::nccl);
}

TEST_CASE("params: choice refuses an unknown value and lists every allowed name", "[params]") {
  const Params rocm{{"impl", "rocm"}};
  CHECK_THROWS_AS(impl_of(rocm), mgbench::UsageError);
  const std::string message = usage_error([&] { return impl_of(rocm); });
  CHECK(contains(message, "impl"));
  CHECK(contains(message, "rocm"));
  CHECK(contains(message, "cublas"));
  CHECK(contains(message, "mgbench"));
  CHECK(contains(message, "nccl"));
}

TEST_CASE("params: dump is nlohmann::json's text of the same object, names sorted", "[params]") {
  const Params p{{"zeta", 8192}, {"alpha", "bf16"}, {"mid", true}, {"ratio", 0.5},
                 {"neg", -7},    {"scale", 1024.0}};
  const Json j = {{"zeta", 8192}, {"alpha", "bf16"}, {"mid", true}, {"ratio", 0.5},
                  {"neg", -7},    {"scale", 1024.0}};
  CHECK(p.dump() == j.dump());
  CHECK(p.dump() ==
        R"({"alpha":"bf16","mid":true,"neg":-7,"ratio":0.5,"scale":1024.0,"zeta":8192})");
  CHECK(Json(p).dump() == j.dump());
}

TEST_CASE("params: from_json of to_json gives the same parameters back", "[params]") {
  const Params p{{"bytes", std::int64_t{1} << 40}, {"impl", "nccl"}, {"inplace", false},
                 {"ratio", 0.25}};
  CHECK(Params::from_json(p.to_json()) == p);
  CHECK(Json(p).get<Params>() == p);
  CHECK(Params::from_json(Json::object()) == Params{});
}

TEST_CASE("params: from_json refuses anything but an object", "[params]") {
  CHECK_THROWS_AS(Params::from_json(Json::array({1, 2})), mgbench::UsageError);
  CHECK_THROWS_AS(Params::from_json(Json("m=8192")), mgbench::UsageError);
  CHECK_THROWS_AS(Params::from_json(Json(8192)), mgbench::UsageError);
  CHECK_THROWS_AS(Params::from_json(Json()), mgbench::UsageError);
}

TEST_CASE("params: from_json refuses a nested array or object value", "[params]") {
  CHECK_THROWS_AS(Params::from_json(Json{{"sizes", Json::array({1, 2})}}), mgbench::UsageError);
  CHECK_THROWS_AS(Params::from_json(Json{{"model", {{"layers", 2}}}}), mgbench::UsageError);
  CHECK_THROWS_AS(Params::from_json(Json{{"none", nullptr}}), mgbench::UsageError);
}

TEST_CASE("params: from_json refuses an unsigned integer above INT64_MAX", "[params]") {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const Params largest = Params::from_json(Json{{"bytes", static_cast<std::uint64_t>(kMax)}});
  CHECK(largest.integer("bytes") == kMax);
  const Json above{{"bytes", static_cast<std::uint64_t>(kMax) + 1}};
  CHECK_THROWS_AS(Params::from_json(above), mgbench::UsageError);
  CHECK(contains(usage_error([&] { return Params::from_json(above); }), "bytes"));
}

TEST_CASE("params: a refused value under a 1000-character name gives a short message",
          "[params]") {
  const Json long_name{{std::string(1000, 'k'), Json::array()}};
  const std::string message = usage_error([&] { return Params::from_json(long_name); });
  CHECK_FALSE(message.empty());
  CHECK(message.size() < 200);
}

TEST_CASE("params: a value's str is its command-line text", "[params]") {
  CHECK(ParamValue(8192).str() == "8192");
  CHECK(ParamValue("nccl").str() == "nccl");
  CHECK(ParamValue(true).str() == "true");
  CHECK(ParamValue(0.5).str() == "0.5");
}

TEST_CASE("params: reading a value as another kind is a logic error", "[params]") {
  CHECK_THROWS_AS(ParamValue("nccl").integer(), std::logic_error);
  CHECK_THROWS_AS(ParamValue(8192).text(), std::logic_error);
  CHECK_THROWS_AS(ParamValue(8192).boolean(), std::logic_error);
  CHECK_THROWS_AS(ParamValue(true).number(), std::logic_error);
}

TEST_CASE("params: integers of every width are integers and a C string is text", "[params]") {
  CHECK(ParamValue(std::size_t{4096}).kind() == ParamValue::Kind::integer);
  CHECK(ParamValue(4096).kind() == ParamValue::Kind::integer);
  CHECK(ParamValue(std::int64_t{4096}).kind() == ParamValue::Kind::integer);
  CHECK(ParamValue(std::size_t{4096}) == ParamValue(4096));
  CHECK(ParamValue(std::int64_t{4096}).integer() == 4096);
  const char* name = "x";
  CHECK(ParamValue(name).kind() == ParamValue::Kind::text);
  CHECK(ParamValue("x").kind() == ParamValue::Kind::text);
  CHECK_FALSE(ParamValue("x").is_boolean());
  CHECK(ParamValue("x").text() == "x");
}
