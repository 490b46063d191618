package copier

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/qcow2"
)

// An HTTP(S) or S3 object whose server serves ranges is read at any
// offset, so an image format is layered over it as over a local file
// (image_linux.go): a qcow2 image at a URL goes straight onto DST, its
// metadata read in range requests (the object's cache keeps what the
// image announces, end_web_cache_linux.go), its clusters in the engine's
// parallel ranges, with no scratch copy.
//
// A backing file an image at a URL names is looked up as QEMU's curl
// driver looks it up: a relative name against the image's URL (its
// "directory", bdrv_dirname's path_combine), so base.qcow2 beside
// http://host/images/top.qcow2 is http://host/images/base.qcow2, with
// the same options (credentials, CAs, S3 signing). An absolute name
// (a local path) or one with a protocol QEMU would follow too, but a
// remote image must not make ringcp read this host's files or another
// server's: those are refused, as is an external data file.

// objectEnd is the web kind's end when its object is read at offsets.
type objectEnd struct {
	*srcEnd
	at   *objectCache
	size int64
	// uri is the operand as given (credentials included, never shown):
	// what the chain's relative names resolve against.
	uri  string
	isS3 bool
	plan *Plan
	// checked: checkAlone ran (withFormat asks before it sniffs the
	// format, the Plan again after): its note is made once.
	checked bool
}

// offerRandom makes a web SRC that is read at offsets (not compressed,
// ranges served) an objectEnd, which image formats can be layered over;
// it also keeps one range request in flight per connection.
func offerRandom(p *Plan, ep *endpoint, uri string, isS3 bool, at *objectCache, conns int) {
	s, ok := ep.end.(*srcEnd)
	if !ok || s.seq || at == nil {
		return
	}
	ep.end = &objectEnd{srcEnd: s, at: at, size: at.size, uri: uri, isS3: isS3, plan: p}
	ep.conns = conns
}

func (e *objectEnd) checkAlone(p *Plan) error {
	if e.checked {
		return nil
	}
	e.checked = true
	return e.srcEnd.checkAlone(p)
}

// readerAt is the object's bytes through its cache; the run reads the
// same cache through its objectIO.
func (e *objectEnd) readerAt() (io.ReaderAt, int64, func(), error) {
	return e.at, e.size, func() {}, nil
}

// imageOpener opens the files of an image's chain at the URLs their
// names resolve to.
func (e *objectEnd) imageOpener() qcow2.Opener {
	urls := map[string]string{e.ep.path: e.uri} // shown name -> URL
	return func(ref qcow2.Ref) (qcow2.Transport, qcow2.Format, error) {
		from, ok := urls[ref.From]
		if !ok {
			return nil, "", fmt.Errorf("%s: the URL of %s is not known", ref.Name, ref.From)
		}
		full, err := e.resolveRef(ref, from)
		if err != nil {
			return nil, "", err
		}
		obj, err := openWeb(e.plan, full, e.isS3)
		if err != nil {
			return nil, "", err
		}
		if !obj.Ranges() {
			obj.Close()
			return nil, "", fmt.Errorf("%s: its server does not serve ranges, and a backing file is read at any offset", obj.Name())
		}
		urls[obj.Name()] = full
		return &webLayer{objectCache: newObjectCache(obj, obj.Size(), obj.Connections()), obj: obj}, ref.Format, nil
	}
}

// resolveRef is the URL of a file an image at from names, or why it is
// not followed.
func (e *objectEnd) resolveRef(ref qcow2.Ref, from string) (string, error) {
	name := ref.Name
	switch {
	case ref.Kind == qcow2.RefDataFile:
		return "", fmt.Errorf("an image at a URL with an external data file is not read: convert it with qemu-img convert -O qcow2 where both files are")
	case e.plan.opts.Resume:
		return "", fmt.Errorf("Options.Resume cannot resume from an image at a URL with a backing file: the resume state names the image, not its backing files, which could change unseen")
	case strings.HasPrefix(name, "/") || strings.Contains(name, ":") || name == "":
		// QEMU would open a local path, or any protocol it has.
		return "", fmt.Errorf("%q is not a name relative to the image's URL: an image at a URL is followed only to files beside it (flatten it where it is: qemu-img convert -O qcow2 IMAGE FLAT)", name)
	}
	base, err := url.Parse(from)
	if err != nil {
		return "", err
	}
	return base.ResolveReference(&url.URL{Path: name}).String(), nil
}

// webLayer is an object of an image's chain as qcow2 reads it: through
// its cache, closed with the image.
type webLayer struct {
	*objectCache
	obj *httpobj.Object
}

func (w *webLayer) Name() string         { return w.obj.Name() }
func (w *webLayer) Size() (int64, error) { return w.obj.Size(), nil }
func (w *webLayer) Close() error         { return w.obj.Close() }
