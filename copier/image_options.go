package copier

import "fmt"

// Qcow2Options say how a qcow2 DST (Options.DstFormat FormatQcow2) is
// made: a new version 3 image whose guest reads the copied bytes, where
// SRC's holes and zeros stay unallocated.
type Qcow2Options struct {
	// ClusterSize is a power of two from 512 B to 2 MiB; 0 is 64 KiB.
	ClusterSize int64
	// Compress is "" (none), "zlib" or "zstd": every cluster is stored
	// compressed where that makes it smaller, as qemu-img convert -c.
	Compress string
	// Backing is a backing file for the new image, written in its header
	// as given (a relative name is relative to DST's folder, as QEMU reads
	// it): clusters that read the same as the backing file's are not
	// stored, and SRC's zeros where it has data become zero clusters.
	Backing string
	// BackingFormat is the backing file's format, "raw" or "qcow2"; ""
	// takes it from its first bytes and writes that.
	BackingFormat string
	// Preallocation is "" or "off" (only what is written takes space) or
	// "metadata" (every L2 table written, as qemu-img's
	// preallocation=metadata); metadata goes with neither compression
	// nor a backing file.
	Preallocation string
}

// Preallocation modes of Qcow2Options.
const (
	PreallocOff      = "off"
	PreallocMetadata = "metadata"
)

// checkQcow2 refuses Qcow2Options no image can have, and any of them
// without a qcow2 DST.
func (o *Options) checkQcow2() error {
	q := &o.Qcow2
	bad := func(field, reason string) *RefusedError { return refuse(KindBadInput, "", reason).on("Qcow2." + field) }
	cs := q.ClusterSize
	switch {
	case o.DstFormat != FormatQcow2 && *q != (Qcow2Options{}):
		f := q.setField()
		return bad(f, fmt.Sprintf("Options.Qcow2.%s is for a qcow2 DST: give Options.DstFormat qcow2 too", f))
	case cs != 0 && (cs < 512 || cs > 2<<20 || cs&(cs-1) != 0):
		return bad("ClusterSize", fmt.Sprintf("Options.Qcow2.ClusterSize %d: a power of two from 512 to 2097152", cs))
	case q.Compress != "" && q.Compress != "zlib" && q.Compress != "zstd":
		return bad("Compress", fmt.Sprintf("Options.Qcow2.Compress %q: zlib or zstd", q.Compress))
	case q.BackingFormat != "" && q.BackingFormat != FormatRaw && q.BackingFormat != FormatQcow2:
		return bad("BackingFormat", fmt.Sprintf("Options.Qcow2.BackingFormat %q: raw or qcow2", q.BackingFormat))
	case q.BackingFormat != "" && q.Backing == "":
		return bad("BackingFormat", "Options.Qcow2.BackingFormat without Options.Qcow2.Backing")
	case q.Preallocation != "" && q.Preallocation != PreallocOff && q.Preallocation != PreallocMetadata:
		return bad("Preallocation", fmt.Sprintf("Options.Qcow2.Preallocation %q: off or metadata", q.Preallocation))
	case q.Preallocation == PreallocMetadata && (q.Compress != "" || q.Backing != ""):
		return bad("Preallocation", "Options.Qcow2.Preallocation metadata goes with neither compression nor a backing file")
	case o.DstFormat == FormatQcow2 && o.Resume && o.DstOffset%q.clusterSize() != 0:
		// A resumed copy goes on from a cluster boundary of the image
		// (image_resume_linux.go): the range must start on one.
		return refuse(KindNotSupported, "", fmt.Sprintf("Options.Resume into a qcow2 DST needs Options.DstOffset a multiple of the cluster size (%d), so that the copy can go on from a whole cluster", q.clusterSize())).on("DstOffset")
	}
	return nil
}

// clusterSize is the new image's cluster size, its default filled in.
func (q *Qcow2Options) clusterSize() int64 {
	if q.ClusterSize == 0 {
		return 64 << 10
	}
	return q.ClusterSize
}

// imageKey says what image a copy makes, for its resume state: a rerun
// that would make another one (another format, cluster size, compression
// or backing file) is another copy. "" for a raw DST.
func (o *Options) imageKey() string {
	if o.DstFormat != FormatQcow2 {
		return ""
	}
	q := &o.Qcow2
	pre := q.Preallocation
	if pre == PreallocOff {
		pre = "" // the same image
	}
	return fmt.Sprintf("qcow2 cluster_size=%d compress=%q backing=%q backing_format=%q preallocation=%q",
		q.clusterSize(), q.Compress, q.Backing, q.BackingFormat, pre)
}

// setField names a field of q that is set.
func (q *Qcow2Options) setField() string {
	switch {
	case q.ClusterSize != 0:
		return "ClusterSize"
	case q.Compress != "":
		return "Compress"
	case q.Backing != "":
		return "Backing"
	case q.BackingFormat != "":
		return "BackingFormat"
	}
	return "Preallocation"
}
