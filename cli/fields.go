package cli

import (
	"maps"
	"slices"
	"strings"
)

// fieldReplacer rewrites the library's names of fields ("Options.Length")
// in the command's words (a flag, a dd operand). It tries longer names
// first, so that no field's name is taken for the start of another's.
func fieldReplacer(words map[string]string) *strings.Replacer {
	fields := slices.Collect(maps.Keys(words))
	slices.SortFunc(fields, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, field := range fields {
		pairs = append(pairs, field, words[field])
	}
	return strings.NewReplacer(pairs...)
}
