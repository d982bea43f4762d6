#pragma once
// Console rendering of `mgbench predict` (analysis/prediction.hpp): the links the prediction
// assumes, one table per predicted series (time with its band, throughput, efficiency with its
// band, the parts of the time, the dominant term, the measured point beside the prediction),
// the one-GPU compute check, and the notes.
#include <ostream>

#include "mgbench/analysis/prediction.hpp"

namespace mgbench::reports {

void render_prediction(const Prediction& prediction, std::ostream& out);

}  // namespace mgbench::reports
