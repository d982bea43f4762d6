#pragma once
// The interconnects `mgbench predict` knows by name: per GPU and per direction, the line rate
// of the datasheet and the bandwidth a collective sustains on it, the latency of one hop, and
// NVLink SHARP (NVLS) where the link has it. The table is data in one place (links.cpp), each
// row with its sources; docs/METHODOLOGY.md ("Prediction") lists the same sources.
#include <string>
#include <vector>

namespace mgbench {

enum class LinkScope { intra_node, inter_node };
const char* to_string(LinkScope scope);

struct Link {
  std::string name;  // preset name, or "custom"
  LinkScope scope = LinkScope::intra_node;
  double line_GBps = 0;       // datasheet rate per GPU and direction (0: not known)
  double bandwidth_GBps = 0;  // what a ring collective sustains per GPU and direction
  double hop_latency_us = 0;  // one step of an algorithm over this link
  // NVLink SHARP: the share of bandwidth_GBps an NVLS collective gets (0: no NVLS), and the
  // latency of one NVLS operation (the switch round trip).
  double nvls_efficiency = 0;
  double nvls_latency_us = 0;
  std::string source;  // where the numbers come from (document names and years)
};

// Every named link, intra-node ones first.
const std::vector<Link>& link_presets();

// `text` is a preset name of `scope`, or a number: the bandwidth a collective sustains per GPU
// and direction, in GB/s for the intra-node link and in Gb/s for the inter-node link (as NICs
// are sold), used as is. UsageError (one line) for anything else, a preset of the other scope
// included. `option` names the option in the message ("--intra").
Link parse_link(const std::string& text, LinkScope scope, const std::string& option);

// The preset called `name`; UsageError when there is none.
const Link& link_preset(const std::string& name);

}  // namespace mgbench
