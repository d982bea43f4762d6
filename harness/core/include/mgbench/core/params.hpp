#pragma once
// Parameters of one point: a JSON object of typed values (integers, strings, booleans),
// keys sorted, so that `params.dump()` is a canonical key.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgbench {

using Json = nlohmann::json;
using Params = nlohmann::json;  // always an object

std::int64_t param_int(const Params& params, const std::string& key);
std::string param_str(const Params& params, const std::string& key);
bool param_bool(const Params& params, const std::string& key);
// "gemm dtype=bf16 impl=cublas m=8192 ..." for logs and messages.
std::string describe_params(const Params& params);

// Parses "1K", "64M", "1G", "4096" (binary units) into bytes; throws UsageError naming `what`.
std::uint64_t parse_size(const std::string& text, const std::string& what);
std::string format_bytes(std::uint64_t bytes);  // "64 MiB", "8 B"
// Parses a strictly positive integer; throws UsageError naming `what`.
std::int64_t parse_positive_int(const std::string& text, const std::string& what);
double parse_double(const std::string& text, const std::string& what);
// Splits "a,b,c"; throws UsageError for empty items or an empty list.
std::vector<std::string> split_list(const std::string& text, const std::string& what);

}  // namespace mgbench
