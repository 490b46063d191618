package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// optionFields are the exported fields of an Options, those of its
// structs as "NBD.Connections", with their values (a func field as
// whether it is set, which is all that can be compared of it).
func optionFields(v reflect.Value, prefix string) map[string]any {
	out := map[string]any{}
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		switch {
		case !f.IsExported():
		case f.Type.Kind() == reflect.Struct:
			for k, x := range optionFields(fv, prefix+f.Name+".") {
				out[k] = x
			}
		case f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Pointer:
			out[prefix+f.Name] = fmt.Sprintf("set %v", !fv.IsNil())
		default:
			out[prefix+f.Name] = fv.Interface()
		}
	}
	return out
}

// TestEveryOptionBound: every exported field of copier.Options is set by
// one flag of optionFlags, or listed in unboundFields with the reason; a
// field added to Options fails here until it is one or the other.
func TestEveryOptionBound(t *testing.T) {
	fields := optionFields(reflect.ValueOf(copier.Options{}), "")
	bound := map[string]string{}
	for _, f := range optionFlags {
		if other, dup := bound[f.field]; dup {
			t.Errorf("Options.%s is bound to --%s and --%s", f.field, other, f.name)
		}
		bound[f.field] = f.name
		if _, ok := fields[f.field]; !ok {
			t.Errorf("--%s binds Options.%s, which does not exist", f.name, f.field)
		}
	}
	for field, why := range unboundFields {
		if _, ok := fields[field]; !ok {
			t.Errorf("unboundFields lists Options.%s, which does not exist", field)
		}
		if name, ok := bound[field]; ok || why == "" {
			t.Errorf("Options.%s: listed unbound (%q) and bound to %q", field, why, name)
		}
	}
	for field := range fields {
		if _, ok := bound[field]; !ok && unboundFields[field] == "" {
			t.Errorf("Options.%s has no flag: bind one in optionFlags, or say in unboundFields why not", field)
		}
	}
	for field := range batchFlags {
		if _, ok := reflect.TypeOf(copier.BatchOptions{}).FieldByName(field); !ok {
			t.Errorf("batchFlags names BatchOptions.%s, which does not exist", field)
		}
	}
}

// TestOptionFlagsSetTheirField: each flag, given, sets the field it is
// bound to; --dst-offset and --length also keep the rest of DST, and
// --length says it was given. No flag sets another field.
func TestOptionFlagsSetTheirField(t *testing.T) {
	samples := map[string]string{"engine": "pool", "direct": "never", "sync": "none", "sparse": "never", "offload": "never",
		"src-format": "raw", "dst-format": "qcow2", "state": "s", "ioprio": "idle", "nbd-connections": "7"}
	byType := map[string]string{"SIZE": "8k", "int": "3", "duration": "3s", "bool": "true", "string": "x"}
	also := map[string][]string{"dst-offset": {"DstSize"}, "length": {"DstSize", "LengthSet"}, "extents": {"ExtentsSet"}}
	list := filepath.Join(t.TempDir(), "extents")
	if err := os.WriteFile(list, []byte("0 4096\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	samples["extents"], samples["dirty-bitmap"] = list, "b0"
	for _, f := range optionFlags {
		var o copier.Options
		fs := newFlagSet("test")
		defineOptionFlags(fs, &o, f.name)
		before := optionFields(reflect.ValueOf(o), "")
		value, ok := samples[f.name]
		if !ok {
			value = byType[fs.Lookup(f.name).Value.Type()]
		}
		if err := fs.Parse([]string{"--" + f.name + "=" + value}); err != nil {
			t.Errorf("--%s=%s: %v", f.name, value, err)
			continue
		}
		var changed []string
		for k, v := range optionFields(reflect.ValueOf(o), "") {
			if !reflect.DeepEqual(before[k], v) {
				changed = append(changed, k)
			}
		}
		slices.Sort(changed)
		want := append([]string{f.field}, also[f.name]...)
		slices.Sort(want)
		if !slices.Equal(changed, want) {
			t.Errorf("--%s=%s changed %v, want %v", f.name, value, changed, want)
		}
	}
}

// TestRefusalsNameFlags: what copier refuses in a value the flags let
// through is said with the flag (and, in --json, "flag"), never the
// field.
func TestRefusalsNameFlags(t *testing.T) {
	fx := newFixture(t)
	cases := []struct{ args, want string }{
		{"-b 2G", "--block-size 2147483648: out of range (1 B to 1 GiB)"},
		{"-q 100000", "--queue-depth 100000: out of range (1 to 1024)"},
		{"--zero-block 3000", "--zero-block 3000: must be a power of two up to 1 GiB"},
		{"--nbd-connections 65", "--nbd-connections 65: out of range (1 to 64)"},
		{"--nbd-timeout -1s", "--nbd-timeout -1s: must not be negative"},
		{"--ioprio be:8", "--ioprio: I/O priority \"be:8\": the level is 0 (highest) to 7 (lowest)"},
		{"--engine spdk", "unknown --engine \"spdk\" (auto, "},
		{"--state s", "--state is for --resume: give it too"},
		{"--sync-every 1s", "--sync-every is for --resume: give it too"},
		{"--resume --sync-every -1s", "--sync-every -1s: must not be negative"},
	}
	for _, c := range cases {
		args := append(strings.Fields(c.args), "--json", fx.Src, fx.New)
		r := cli(t, args...)
		r.want(t, exitRefused, c.want)
		if strings.Contains(r.stderr, "Options.") || !strings.Contains(r.stdout, `"flag":"--`) {
			t.Errorf("%s: a field's name, or no flag in --json:\n%s%s", c.args, r.stderr, r.stdout)
		}
		fx.Unchanged(t)
	}
	// verify and checksum take the same flags, checked by the same copier.
	cli(t, "verify", "-q", "2000", fx.Src, fx.Dst).want(t, exitRefused, "--queue-depth 2000: out of range (1 to 1024)")
	cli(t, "checksum", "--engine", "spdk", fx.Src).want(t, exitRefused, `unknown --engine "spdk" (auto, `)
	fx.Unchanged(t)
}
