// Package schematest checks JSON against the repository's JSON Schema
// files, for tests. It implements the part of JSON Schema (draft 2020-12)
// those files use: $ref to #/$defs, type, const, enum, properties,
// required, additionalProperties and unevaluatedProperties (false),
// items, allOf, anyOf, not, if/then/else, minimum and minLength. A
// schema with any other keyword is an error rather than a check silently
// skipped. Only tests import it: it stays out of the library's build.
package schematest
