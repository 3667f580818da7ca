// "Did you mean ...?" for unknown keys: the nearest known name by edit distance.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp::config {

// Optimal string alignment distance: insertions, deletions, substitutions and
// swaps of two neighbours each cost 1 (a swap is the commonest typo: "ligner").
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, if it is near enough to be a typo of it
// (at most a third of the typed length, and at least 2, edits away). Ties go
// to the earlier candidate, so callers list the likelier ones first.
std::optional<std::string> nearest(std::string_view typed, const std::vector<std::string>& candidates);

// The known "section.key" an unknown key most likely meant: the key typed in
// the right section, or the right key put in the wrong section (or at the top
// level, section empty).
std::optional<std::string> suggest_key(std::string_view section, std::string_view name);
// The known section nearest to an unknown one.
std::optional<std::string> suggest_section(std::string_view section);

}  // namespace pp::config
