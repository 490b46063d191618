package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Schema is a loaded schema file.
type Schema struct {
	root map[string]any
}

// Output loads schema/ringcp-output.schema.json, the --json contract.
func Output(t testing.TB) *Schema {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	return Load(t, filepath.Join(filepath.Dir(here), "..", "..", "schema", "ringcp-output.schema.json"))
}

// Load reads a schema file.
func Load(t testing.TB, path string) *Schema {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &Schema{root: root}
}

// Check fails t unless doc is one JSON value the schema accepts; it
// returns the value decoded (numbers as json.Number).
func (s *Schema) Check(t testing.TB, doc []byte) map[string]any {
	t.Helper()
	v, err := s.Validate(doc)
	if err != nil {
		t.Errorf("%v\n%s", err, doc)
	}
	return v
}

// Validate decodes doc, one JSON object, and checks it.
func (s *Schema) Validate(doc []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	var c checker
	c.root = s.root
	c.check(s.root, v, "")
	obj, _ := v.(map[string]any)
	if len(c.errs) > 0 {
		return obj, fmt.Errorf("schema: %s", strings.Join(c.errs, "; "))
	}
	return obj, nil
}

type checker struct {
	root map[string]any
	errs []string
}

func (c *checker) fail(at, format string, args ...any) {
	c.errs = append(c.errs, at+": "+fmt.Sprintf(format, args...))
}

// passes says whether v matches sch, without recording errors; it
// returns the object properties sch evaluated.
func (c *checker) passes(sch any, v any, at string) (map[string]bool, bool) {
	sub := checker{root: c.root}
	ev := sub.check(sch, v, at)
	return ev, len(sub.errs) == 0
}

// check records why v does not match sch and returns the properties of v
// (an object) that sch evaluated, for unevaluatedProperties.
func (c *checker) check(sch any, v any, at string) map[string]bool {
	s, ok := sch.(map[string]any)
	if !ok {
		c.fail(at, "schema is not an object")
		return nil
	}
	ev := map[string]bool{}
	merge := func(m map[string]bool) {
		for k := range m {
			ev[k] = true
		}
	}
	obj, isObj := v.(map[string]any)
	for _, k := range sortedKeys(s) {
		kw := s[k]
		switch k {
		case "$schema", "$id", "title", "description", "$defs", "then", "else":
		case "$ref":
			merge(c.check(c.resolve(kw.(string), at), v, at))
		case "type":
			c.checkType(kw, v, at)
		case "const":
			if !equal(kw, v) {
				c.fail(at, "want %v, have %v", kw, v)
			}
		case "enum":
			if !slices.ContainsFunc(kw.([]any), func(e any) bool { return equal(e, v) }) {
				c.fail(at, "%v is not one of %v", v, kw)
			}
		case "minimum":
			if n, ok := v.(json.Number); ok && compare(n, kw) < 0 {
				c.fail(at, "%v is less than %v", v, kw)
			}
		case "minLength":
			if str, ok := v.(string); ok && len([]rune(str)) < int(kw.(float64)) {
				c.fail(at, "%q is shorter than %v", str, kw)
			}
		case "required":
			for _, name := range kw.([]any) {
				if _, has := obj[name.(string)]; isObj && !has {
					c.fail(at, "lacks %q", name)
				}
			}
		case "properties":
			for name, ps := range kw.(map[string]any) {
				if pv, has := obj[name]; isObj && has {
					c.check(ps, pv, at+"."+name)
					ev[name] = true
				}
			}
		case "additionalProperties":
			props, _ := s["properties"].(map[string]any)
			for name, pv := range obj {
				if _, listed := props[name]; !listed {
					c.closed(kw, pv, at+"."+name)
					ev[name] = true
				}
			}
		case "unevaluatedProperties":
			// After every other keyword: see below.
		case "items":
			arr, _ := v.([]any)
			for i, item := range arr {
				c.check(kw, item, fmt.Sprintf("%s[%d]", at, i))
			}
		case "allOf":
			for _, sub := range kw.([]any) {
				merge(c.check(sub, v, at))
			}
		case "anyOf":
			any1 := false
			for _, sub := range kw.([]any) {
				if m, ok := c.passes(sub, v, at); ok {
					merge(m)
					any1 = true
				}
			}
			if !any1 {
				c.fail(at, "matches none of anyOf")
			}
		case "not":
			if _, ok := c.passes(kw, v, at); ok {
				c.fail(at, "matches what not forbids: %v", kw)
			}
		case "if":
			m, ok := c.passes(kw, v, at)
			branch := "else"
			if ok {
				merge(m)
				branch = "then"
			}
			if b, has := s[branch]; has {
				merge(c.check(b, v, at))
			}
		default:
			c.fail(at, "schema keyword %q is not implemented by schematest", k)
		}
	}
	if kw, has := s["unevaluatedProperties"]; has && isObj {
		for name, pv := range obj {
			if !ev[name] {
				c.closed(kw, pv, at+"."+name)
				ev[name] = true
			}
		}
	}
	return ev
}

// closed applies additionalProperties or unevaluatedProperties: false
// refuses the property, a schema checks it.
func (c *checker) closed(kw, v any, at string) {
	if b, ok := kw.(bool); ok {
		if !b {
			c.fail(at, "not in the schema")
		}
		return
	}
	c.check(kw, v, at)
}

func (c *checker) resolve(ref, at string) any {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	defs, _ := c.root["$defs"].(map[string]any)
	if !ok || defs[name] == nil {
		c.fail(at, "cannot resolve $ref %q", ref)
		return map[string]any{}
	}
	return defs[name]
}

func (c *checker) checkType(kw, v any, at string) {
	types := []any{kw}
	if list, ok := kw.([]any); ok {
		types = list
	}
	for _, t := range types {
		if isType(t.(string), v) {
			return
		}
	}
	c.fail(at, "%v (%T) is not of type %v", v, v, kw)
}

func isType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		return ok && !strings.ContainsAny(n.String(), ".eE")
	}
	return false
}

// equal compares a schema's value (numbers as float64) with a document's
// (numbers as json.Number).
func equal(schema, doc any) bool {
	if n, ok := doc.(json.Number); ok {
		return compare(n, schema) == 0
	}
	return schema == doc
}

// compare orders a document's number against a schema's; 2 when the
// schema's is not a number.
func compare(n json.Number, schema any) int {
	f, ok := schema.(float64)
	if !ok {
		return 2
	}
	a, _, err := big.ParseFloat(n.String(), 10, 128, big.ToNearestEven)
	if err != nil {
		return 2
	}
	return a.Cmp(big.NewFloat(f))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
