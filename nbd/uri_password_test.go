package nbd

import (
	"strings"
	"testing"
)

// TestParseURIHidesPassword: a URI refused for its user info does not
// print the password it holds. Before, the error quoted the URI whole.
func TestParseURIHidesPassword(t *testing.T) {
	for _, uri := range []string{"nbd://admin:hunter2pw@host/x", "nbds://u:hunter2pw@host:10809/x"} {
		_, err := ParseURI(uri)
		if err == nil {
			t.Fatalf("%s: no error", uri)
		}
		if strings.Contains(err.Error(), "hunter2pw") || !strings.Contains(err.Error(), "user info") {
			t.Errorf("%s: %v", uri, err)
		}
	}
}
