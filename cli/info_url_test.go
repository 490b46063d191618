package cli

import (
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"
)

// TestInfoURLRefusedWithoutSecrets: info reads local images; a URL is
// refused as not supported (not "no such file"), and its password and
// presigned signature are shown in neither the object nor the line.
// Before, both carried them, src, path and message alike.
func TestInfoURLRefusedWithoutSecrets(t *testing.T) {
	s := schematest.Output(t)
	url := "http://user:s3cr3t@127.0.0.1:1/disk.img?X-Amz-Signature=abcdef123&X-Amz-Credential=AKIAXX"
	for _, args := range [][]string{{"info", "--json", url}, {"info", url}} {
		r := cli(t, args...)
		r.want(t, exitRefused, "127.0.0.1:1/disk.img")
		for _, secret := range []string{"s3cr3t", "abcdef123"} {
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("%v: %q shown:\n%s%s", args[:len(args)-1], secret, r.stdout, r.stderr)
			}
		}
		if args[1] != "--json" {
			continue
		}
		got := s.Check(t, []byte(r.stdout))
		if e, _ := got["error"].(map[string]any); e["kind"] != "not_supported" {
			t.Errorf("error %v, want not_supported", e)
		}
	}
}
