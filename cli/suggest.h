// "Did you mean ...?" for a mistyped subcommand or option: the nearest of the known words by edit
// distance, when it is near enough to be what the user meant.
#pragma once
#include <string>
#include <vector>

namespace hark::cli {

// The word of `known` closest to `typed` (insertions, deletions, substitutions and swaps of two
// neighbours each cost 1), or "" when none is within a third of the word's length (at least 1, at
// most 3 edits).
std::string nearest(const std::string& typed, const std::vector<std::string>& known);

}  // namespace hark::cli
