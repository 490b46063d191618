package copier_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// TestWebUnpinnedObject: an object whose server gives no ETag nor
// Last-Modified is copied, and the report's engine detail (-v, --json's
// engine_detail) says it is not pinned; --resume is refused before DST
// is touched, saying why (before, the refusal said SRC is "read once",
// which a URL is not).
func TestWebUnpinnedObject(t *testing.T) {
	data := randomBytes(1<<20+511, 31)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	defer ts.Close()
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	rep, err := copier.Copy(context.Background(), copier.Options{Src: ts.URL + "/obj", Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	compareFile(t, dst, data)
	if !strings.Contains(rep.EngineDetail, "not pinned") {
		t.Errorf("engine detail %q does not say the object is not pinned", rep.EngineDetail)
	}
	resumed := filepath.Join(dir, "resumed")
	_, err = copier.Copy(context.Background(), copier.Options{Src: ts.URL + "/obj", Dst: resumed, Resume: true})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || refused.Kind != copier.KindNotSupported {
		t.Fatalf("--resume: %v; want a refusal", err)
	}
	if !strings.Contains(err.Error(), "no ETag nor Last-Modified") {
		t.Errorf("the refusal does not say why: %v", err)
	}
	mustNotExist(t, resumed)
}
