#pragma once
#define MGBENCH_CONCAT_INNER(a, b) a##b
#define MGBENCH_CONCAT(a, b) MGBENCH_CONCAT_INNER(a, b)
