#pragma once
// The one sanitiser for text that came from input (results files, journals, history databases,
// worker messages, host names, command-line values) before it reaches a console, a log or a
// report: nothing in it can move the cursor, recolour the terminal, reorder the line or forge
// a second line.
#include <string>
#include <string_view>

namespace mgbench {

// Valid UTF-8 in which every invalid byte (a raw 0x80-0x9F too), C0 control, DEL, C1 control
// (U+0080-U+009F, CSI U+009B among them) and bidirectional control (U+061C, U+200E/F,
// U+202A-E, U+2066-9) becomes U+FFFD. With `keep_newlines`, tab, newline and a CR directly
// before a newline stay; otherwise tab, CR and newline become one space each.
std::string sanitize_text(std::string_view text, bool keep_newlines);

// sanitize_text without newlines, runs of spaces collapsed and trailing spaces dropped: one
// console cell, one log line, one error message.
std::string one_line(std::string_view text);

// Length of the valid UTF-8 sequence at `i` of `text`, or 0 when the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

}  // namespace mgbench
