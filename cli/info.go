package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/internal/units"
	"github.com/ringcp/ringcp/qcow2"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

const infoUsage = `Usage: ringcp info [--json] IMAGE

Says what a platform needs to know of a disk image (a qcow2 or raw file
or block device) before it copies it: its format, virtual size, the bytes
it takes, its cluster size and compression, its backing chain with each
file's format, whether QEMU (or anyone) holds it (their locks), and what
a new qcow2 image of it would take (as qemu-img info and qemu-img
measure -O qcow2 say). It reads metadata only. --json prints it as one
object (the envelope every command's --json has, then "image"), the
chain nested under "backing_image".

Flags:
`

// imageInfo is what info prints of one file of a chain: qemu-img info
// --output json's fields, in the snake case of ringcp's --json.
type imageInfo struct {
	Filename        string     `json:"filename"`
	Format          string     `json:"format"`
	VirtualSize     int64      `json:"virtual_size"`
	ActualSize      int64      `json:"actual_size,omitempty"` // bytes it takes on its filesystem
	FileSize        int64      `json:"file_size"`
	ClusterSize     int64      `json:"cluster_size,omitempty"`
	Compat          string     `json:"compat,omitempty"`
	CompressionType string     `json:"compression_type,omitempty"`
	ExtendedL2      bool       `json:"extended_l2,omitempty"`
	DataBytes       *int64     `json:"data_bytes,omitempty"` // guest bytes this file stores
	CompressedBytes int64      `json:"compressed_bytes,omitempty"`
	Dirty           bool       `json:"dirty"`
	Corrupt         bool       `json:"corrupt,omitempty"`
	Encrypted       string     `json:"encrypted,omitempty"`
	Snapshots       int        `json:"snapshots,omitempty"`
	DataFile        string     `json:"data_file,omitempty"`
	BackingFilename string     `json:"backing_filename,omitempty"`
	BackingFormat   string     `json:"backing_format,omitempty"`
	InUse           *bool      `json:"in_use,omitempty"`
	InUseBy         string     `json:"in_use_by,omitempty"`
	Measure         *measured  `json:"measure,omitempty"` // the top image only
	Backing         *imageInfo `json:"backing_image,omitempty"`
	BackingError    string     `json:"backing_error,omitempty"`
}

// measured is qemu-img measure -O qcow2's answer for a 64 KiB-cluster
// image.
type measured struct {
	Required       int64 `json:"required"`
	FullyAllocated int64 `json:"fully_allocated"`
}

func runInfo(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("ringcp info", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	help := fs.BoolP("help", "h", false, "show this help")
	onlyOnce(fs)
	if err := fs.Parse(args); err != nil {
		return infoRefused(stdout, stderr, *asJSON || wantsJSON(args), "", usagef("ringcp info: %v", err))
	}
	if *help {
		fmt.Fprint(stdout, infoUsage+fs.FlagUsages())
		return errHelp
	}
	if fs.NArg() != 1 {
		return infoRefused(stdout, stderr, *asJSON, "", usagef("ringcp info: need one IMAGE, got %d operand(s) (see ringcp info --help)", fs.NArg()))
	}
	if err := refuseURL(fs.Arg(0)); err != nil {
		return infoRefused(stdout, stderr, *asJSON, shown(fs.Arg(0)), err)
	}
	info, err := describeImage(fs.Arg(0))
	switch {
	case err != nil:
		return infoRefused(stdout, stderr, *asJSON, fs.Arg(0), err)
	case *asJSON:
		return writeObject(stdout, newEnvelope("info", nil), nil, infoObject{Src: fs.Arg(0), Image: info})
	}
	printInfo(stdout, info, "")
	return nil
}

// infoRefused says why info could not describe src: on stderr, and with
// asJSON as the envelope on stdout.
func infoRefused(stdout, stderr io.Writer, asJSON bool, src string, err error) error {
	if !asJSON {
		return err
	}
	fmt.Fprintf(stderr, "ringcp: %s\n", message(err))
	return &reported{writeObject(stdout, newEnvelope("info", err), err, infoObject{Src: src})}
}

// infoObject is info's --json after the envelope: the operand, and the
// image when it could be read.
type infoObject struct {
	Src   string     `json:"src"`
	Image *imageInfo `json:"image,omitempty"`
}

// refuseURL refuses an operand that is a URL and no local file: info
// reads local images and devices. The refusal shows the URL without the
// credentials it may hold (a password, a presigned signature), which
// "no such file" echoed.
func refuseURL(operand string) error {
	scheme, _, ok := strings.Cut(operand, "://")
	if !ok || scheme == "" || strings.Contains(scheme, "/") {
		return nil
	}
	if _, err := os.Lstat(operand); err == nil {
		return nil
	}
	return &copier.RefusedError{Kind: copier.KindNotSupported, Path: shown(operand),
		Reason: "info describes local images and block devices, not URLs"}
}

// describeImage looks at the image at path, read-only.
func describeImage(path string) (*imageInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		kind := copier.KindCheckFailed
		if errors.Is(err, os.ErrNotExist) {
			kind = copier.KindNotFound
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &copier.RefusedError{Kind: kind, Path: path, Reason: fmt.Sprintf("cannot open: %v", err), Err: err}
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if m := st.Mode & unix.S_IFMT; m != unix.S_IFREG && m != unix.S_IFBLK {
		return nil, &copier.RefusedError{Kind: copier.KindNotSupported, Path: path, Reason: "is not a regular file or block device"}
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	var head [8]byte
	n, _ := f.ReadAt(head[:], 0)
	if n < 8 || string(head[:4]) != "QFI\xfb" || head[7] < 2 {
		if format, _ := guard.ImageFormat(path, size, size); format != "" && format != "luks" {
			return nil, &copier.RefusedError{Kind: copier.KindImageFormat, Path: path,
				Reason: fmt.Sprintf("is a %s image: ringcp reads raw and qcow2 (qemu-img info %s tells more)", format, path)}
		}
	}
	qi, err := qcow2.Inspect(qcow2Probe{f, size}, qcow2.InspectOptions{Options: qcow2.Options{Opener: qcow2.FileOpener}, InUse: inUse})
	if errors.Is(err, qcow2.ErrNotQcow2) {
		return rawInfo(f, path, size)
	}
	if err != nil {
		return nil, refusedImage(path, err)
	}
	info := fromQcow2(qi)
	if im, err := qcow2.Open(qcow2Probe{f, size}, qcow2.Options{Opener: qcow2.FileOpener}); err == nil {
		if m, err := qcow2.Measure(im, 0); err == nil {
			info.Measure = &measured{m.Required, m.FullyAllocated}
		}
		im.Close()
	}
	return info, nil
}

// qcow2Probe is the opened file under the name given, and its size (a
// block device's too).
type qcow2Probe struct {
	*os.File
	size int64
}

func (p qcow2Probe) Size() (int64, error) { return p.size, nil }

// refusedImage is an image qcow2 cannot describe at all: exit 2.
func refusedImage(path string, err error) error {
	var qe *qcow2.Error
	if errors.As(err, &qe) {
		return &copier.RefusedError{Kind: copier.KindBadInput, Path: path, Reason: err.Error(), Err: err}
	}
	return err
}

// inUse says whether someone holds the file by QEMU's locks, a write
// lock or flock (what a copy onto it would refuse).
func inUse(t qcow2.Transport) (bool, error) {
	// A descriptor of its own: an *os.File made over t's would close
	// t's descriptor when collected.
	file, err := os.OpenFile(t.Name(), os.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer file.Close()
	c, err := guard.CheckDst(file)
	if err != nil {
		return false, err
	}
	return c != nil, nil
}

// fromQcow2 is qcow2's Info of a chain in info's terms.
func fromQcow2(q *qcow2.Info) *imageInfo {
	in := &imageInfo{Filename: q.Name, Format: string(q.Format), VirtualSize: q.VirtualSize, FileSize: q.FileSize,
		ClusterSize: q.ClusterSize, Compat: q.Compat, CompressionType: q.CompressionType, ExtendedL2: q.ExtendedL2,
		Dirty: q.Dirty, Corrupt: q.Corrupt, Encrypted: q.Encrypted, Snapshots: q.Snapshots, DataFile: q.DataFile,
		BackingFilename: q.BackingFile, BackingFormat: string(q.BackingFormat), InUse: q.InUse, CompressedBytes: q.CompressedBytes}
	if q.DiskSize >= 0 {
		in.ActualSize = q.DiskSize
	}
	if q.DataBytes >= 0 {
		in.DataBytes = &q.DataBytes
	}
	if q.InUse != nil && *q.InUse {
		in.InUseBy = "locks held by another program (QEMU's, a write lock or flock)"
	}
	if q.Backing != nil {
		in.Backing = fromQcow2(q.Backing)
	}
	if q.BackingError != nil {
		in.BackingError = q.BackingError.Error()
	}
	return in
}

// rawInfo describes a raw file or device: its data is where SEEK_DATA
// finds it.
func rawInfo(f *os.File, path string, size int64) (*imageInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	in := &imageInfo{Filename: path, Format: "raw", VirtualSize: size, FileSize: size, ActualSize: st.Blocks * 512}
	busy, err := inUse(qcow2Probe{f, size})
	if err == nil {
		in.InUse = &busy
		if busy {
			in.InUseBy = "locks held by another program (QEMU's, a write lock or flock)"
		}
	}
	if m, err := qcow2.Measure(rawMap{f, size, st.Mode&unix.S_IFMT == unix.S_IFBLK}, 0); err == nil {
		in.Measure = &measured{m.Required, m.FullyAllocated}
	}
	return in, nil
}

// rawMap is a raw file's data for Measure: SEEK_DATA and SEEK_HOLE; a
// device is all data.
type rawMap struct {
	f     *os.File
	size  int64
	block bool
}

func (r rawMap) Size() int64 { return r.size }

func (r rawMap) Data(off, end int64) (int64, int64, error) {
	if r.block {
		return off, end, nil
	}
	fd := int(r.f.Fd())
	start, err := unix.Seek(fd, off, unix.SEEK_DATA)
	if errors.Is(err, unix.ENXIO) || (err == nil && start >= end) {
		return end, end, nil
	}
	if err != nil {
		return off, end, nil // cannot tell: all data
	}
	stop, err := unix.Seek(fd, start, unix.SEEK_HOLE)
	if err != nil {
		return start, end, nil
	}
	return start, min(stop, end), nil
}

// printInfo writes info as qemu-img info's text does, the chain
// indented below.
func printInfo(w io.Writer, in *imageInfo, indent string) {
	p := func(format string, args ...any) { fmt.Fprintf(w, indent+format+"\n", args...) }
	p("image: %s", in.Filename)
	p("file format: %s", in.Format)
	p("virtual size: %s (%d bytes)", units.Format(in.VirtualSize), in.VirtualSize)
	p("disk size: %s", units.Format(in.ActualSize))
	if in.ClusterSize > 0 {
		p("cluster_size: %d", in.ClusterSize)
		p("compat: %s", in.Compat)
		p("compression type: %s", in.CompressionType)
	}
	if in.DataBytes != nil {
		p("data: %s stored (%s compressed)", units.Format(*in.DataBytes), units.Format(in.CompressedBytes))
	}
	for _, f := range []struct {
		on   bool
		what string
	}{{in.ExtendedL2, "extended L2 entries"}, {in.Dirty, "dirty: needs qemu-img check -r all"}, {in.Corrupt, "marked corrupt"},
		{in.Encrypted != "", "encrypted (" + in.Encrypted + ")"}, {in.DataFile != "", "external data file " + in.DataFile}} {
		if f.on {
			p("%s", f.what)
		}
	}
	if in.InUse != nil {
		use := "no"
		if *in.InUse {
			use = "yes, " + in.InUseBy
		}
		p("in use: %s", use)
	}
	if in.Measure != nil {
		p("as a new qcow2 (64 KiB clusters): required %d, fully allocated %d", in.Measure.Required, in.Measure.FullyAllocated)
	}
	if in.BackingFilename != "" {
		p("backing file: %s (format %s)", in.BackingFilename, in.BackingFormat)
	}
	if in.BackingError != "" {
		p("backing file not read: %s", in.BackingError)
	}
	if in.Backing != nil {
		printInfo(w, in.Backing, indent+"  ")
	}
}
