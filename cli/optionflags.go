package cli

import (
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/spf13/pflag"
)

// optionFlag binds a flag to the copier.Options field it sets. The table
// below is the one place a flag meets its field: the copy defines its
// flags from it, verify, checksum and a --jobs line take theirs from it,
// and a message that names a field ("Options.BlockSize 0: ...") or a
// refusal's Field is shown with the flag from it.
type optionFlag struct {
	field       string // as copier's errors name it: "BlockSize", "NBD.Connections"
	name, short string
	placeholder string // what it takes, in --help ("SIZE"); "" for a switch
	def         string // the value shown as its default, set before parsing
	usage       string
	bind        func(o *copier.Options) pflag.Value
	words       string // how messages say the field when not --name ("--sync none")
}

// optionFlags, in --help's order.
var optionFlags = []optionFlag{
	{field: "BlockSize", name: "block-size", short: "b", placeholder: "SIZE",
		usage: "bytes per request (default: chosen from both ends); with --direct auto rounded to a multiple of the O_DIRECT alignment, which keeps O_DIRECT on",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int]{&o.BlockSize, true} }},
	{field: "QueueDepth", name: "queue-depth", short: "q", placeholder: "N",
		usage: "requests in flight (default: chosen)",
		bind:  func(o *copier.Options) pflag.Value { return countValue{&o.QueueDepth} }},
	{field: "Engine", name: "engine", placeholder: choiceList(copier.EngineChoices()), def: string(copier.EngineAuto),
		usage: "auto: io_uring, or the pool where io_uring is unavailable or not trusted; nbd for NBD exports",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{(*string)(&o.Engine)} }},
	{field: "Direct", name: "direct", placeholder: choiceList(copier.DirectChoices), def: string(copier.DirectAuto),
		usage: "auto: O_DIRECT on each side that takes it; always: refuse where a side cannot",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{(*string)(&o.Direct)} }},
	{field: "NoSync", name: "sync", placeholder: "end|none", def: "end", words: "--sync none",
		usage: "end: fdatasync DST before reporting success",
		bind:  func(o *copier.Options) pflag.Value { return syncValue{&o.NoSync} }},
	{field: "SrcOffset", name: "src-offset", placeholder: "SIZE",
		usage: "start this many bytes into SRC",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int64]{p: &o.SrcOffset} }},
	{field: "DstOffset", name: "dst-offset", placeholder: "SIZE",
		usage: "write this many bytes into DST (DST is then not truncated)",
		bind: func(o *copier.Options) pflag.Value {
			return rangeValue{sizeValue: sizeValue[int64]{p: &o.DstOffset}, dstSize: &o.DstSize}
		}},
	{field: "Length", name: "length", placeholder: "SIZE",
		usage: "copy this many bytes (default: to the end of SRC; DST is then not truncated)",
		bind: func(o *copier.Options) pflag.Value {
			return rangeValue{sizeValue: sizeValue[int64]{p: &o.Length}, dstSize: &o.DstSize, given: &o.LengthSet}
		}},
	{field: "Sparse", name: "sparse", placeholder: choiceList(copier.SparseChoices), def: string(copier.SparseAuto),
		usage: "holes and zero blocks are not copied as data (auto skips zero scans where zeros cost what data costs; never copies every byte)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{(*string)(&o.Sparse)} }},
	{field: "ZeroBlock", name: "zero-block", placeholder: "SIZE",
		usage: "zero detection granularity, a power of two (default 4096)",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int]{&o.ZeroBlock, true} }},
	{field: "TargetIsZero", name: "target-is-zero",
		usage: "DST already reads as zeros: skip zero ranges instead of zeroing them",
		bind:  func(o *copier.Options) pflag.Value { return boolValue{&o.TargetIsZero} }},
	{field: "Offload", name: "offload", placeholder: choiceList(copier.OffloadChoices), def: string(copier.OffloadAuto),
		usage: "let the filesystem copy (auto: reflink on btrfs/XFS, copy_file_range on NFS/SMB)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{(*string)(&o.Offload)} }},
	{field: "SrcFormat", name: "src-format", placeholder: "auto|raw|qcow2|vmdk|xz|gzip|zstd|bzip2", def: copier.FormatAuto,
		usage: "auto: compressed data (xz, gzip, zstd, bzip2) is decompressed on the fly; a qcow2 or sparse vmdk SRC (monolithicSparse, streamOptimized) is read as its guest sees it (ranges are of the guest's bytes), other disk images (vmdk descriptors, vhdx, vdi, vpc, qed) are refused; raw: SRC's bytes as they are; xz, gzip, zstd, bzip2: insist on that compression; qcow2, vmdk: refuse anything else",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.SrcFormat} }},
	{field: "DstFormat", name: "dst-format", placeholder: "raw|qcow2",
		usage: "raw (the default): the bytes as they are; given, it also lets them overwrite an existing DST that is a disk image, refused otherwise; qcow2: make DST a new qcow2 image (version 3) that stores no holes nor zeros, or write into an existing qcow2 image of the right virtual size as its guest's bytes (as qemu-img convert -n)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.DstFormat} }},
	{field: "SrcSize", name: "size", placeholder: "SIZE",
		usage: "SRC's size when it does not say it (stdin, a pipe, gzip/zstd/bzip2 data): a SRC that ends elsewhere fails the copy; needed to copy such a SRC onto a device or into part of a file",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int64]{p: &o.SrcSize} }},
	{field: "ExpectChecksum", name: "expect-checksum", placeholder: "ALGO:HEX",
		usage: "the digest of SRC as published (sha256, sha512 or md5; before decompression, as SHA256SUMS lists it); exit 3 on a mismatch, and a new DST is discarded",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.ExpectChecksum} }},
	{field: "Web.Connections", name: "http-connections", placeholder: "N",
		usage: "connections to an http(s) or s3 SRC, one range request in flight on each (default 8): the queue depth follows it unless --queue-depth is given",
		bind:  func(o *copier.Options) pflag.Value { return countValue{&o.Web.Connections} }},
	{field: "Web.CAFile", name: "ca-cert", placeholder: "FILE",
		usage: "trust the CA certificates in FILE (PEM) instead of the system's, for https and s3 SRCs",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Web.CAFile} }},
	{field: "Web.CertFile", name: "client-cert", placeholder: "FILE",
		usage: "a client certificate (PEM) for https SRCs; its key in it, or in --client-key",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Web.CertFile} }},
	{field: "Web.KeyFile", name: "client-key", placeholder: "FILE",
		usage: "the key of --client-cert",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Web.KeyFile} }},
	{field: "Web.Insecure", name: "insecure",
		usage: "do not check an https SRC's certificate",
		bind:  func(o *copier.Options) pflag.Value { return boolValue{&o.Web.Insecure} }},
	{field: "Web.Headers", name: "header", placeholder: "'NAME: VALUE'",
		usage: "send this header with every request to an http(s) SRC (repeatable)",
		bind:  func(o *copier.Options) pflag.Value { return listValue{&o.Web.Headers} }},
	{field: "Web.BearerTokenFile", name: "bearer-token-file", placeholder: "FILE",
		usage: "send the token in FILE as 'Authorization: Bearer' to the URL's own host",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Web.BearerTokenFile} }},
	{field: "Web.S3Endpoint", name: "s3-endpoint", placeholder: "URL",
		usage: "an S3-compatible store's URL for s3://bucket/key SRCs (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's, else AWS); keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or ~/.aws",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Web.S3Endpoint} }},
	{field: "Web.S3Region", name: "s3-region", placeholder: "REGION",
		usage: "the region S3 requests are signed for (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's, else us-east-1)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Web.S3Region} }},
	{field: "Qcow2.ClusterSize", name: "cluster-size", placeholder: "SIZE",
		usage: "with --dst-format qcow2: the cluster size, a power of two from 512 to 2M (default 64K)",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int64]{p: &o.Qcow2.ClusterSize} }},
	{field: "Qcow2.Compress", name: "compress", placeholder: "zstd|zlib",
		usage: "with --dst-format qcow2: compress every cluster, zstd or zlib (as qemu-img convert -c)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Qcow2.Compress} }},
	{field: "Qcow2.Backing", name: "backing", placeholder: "FILE",
		usage: "with --dst-format qcow2: the new image's backing file (a relative name is from DST's folder); only clusters that differ from it are stored",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Qcow2.Backing} }},
	{field: "Qcow2.BackingFormat", name: "backing-format", placeholder: "raw|qcow2",
		usage: "the --backing file's format, raw or qcow2 (default: by its first bytes)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Qcow2.BackingFormat} }},
	{field: "Qcow2.Preallocation", name: "preallocation", placeholder: "off|metadata",
		usage: "with --dst-format qcow2: off, or metadata (every table written, as qemu-img's preallocation=metadata)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.Qcow2.Preallocation} }},
	{field: "Verify", name: "verify",
		usage: "read DST back after the copy (from the device, not the cache) and compare it with what was read from SRC; exit 3 on a difference",
		bind:  func(o *copier.Options) pflag.Value { return boolValue{&o.Verify} }},
	{field: "Checksum", name: "checksum",
		usage: "compute SRC's oVirt imageio checksum (blake2b, 4 MiB blocks) from the data as it is copied",
		bind:  func(o *copier.Options) pflag.Value { return checksumValue{&o.Checksum} }},
	{field: "Resume", name: "resume",
		usage: "record progress in a state file and, when one is there, continue the interrupted copy it records",
		bind:  func(o *copier.Options) pflag.Value { return boolValue{&o.Resume} }},
	{field: "StatePath", name: "state", placeholder: "PATH",
		usage: "the --resume state file (default: DST.ringcp-state; a block device DST needs one); with --jobs, a folder for one per job",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.StatePath} }},
	{field: "SyncEvery", name: "sync-every", placeholder: "DURATION",
		usage: "with --resume: sync DST and record the progress this often: a kill loses about this much work (default " + copier.DefaultSyncEvery.String() + ")",
		bind:  func(o *copier.Options) pflag.Value { return durationValue{&o.SyncEvery, true} }},
	{field: "NBD.Connections", name: "nbd-connections", placeholder: "N", def: "4",
		usage: "connections to an NBD export whose server allows several (CAN_MULTI_CONN)",
		bind:  func(o *copier.Options) pflag.Value { return countValue{&o.NBD.Connections} }},
	{field: "NBD.Timeout", name: "nbd-timeout", placeholder: "DURATION",
		usage: "fail when an NBD server does not answer for this long (default 5m; 30s to connect)",
		bind:  func(o *copier.Options) pflag.Value { return durationValue{p: &o.NBD.Timeout} }},
	{field: "MaxRate", name: "max-rate", placeholder: "RATE",
		usage: "cap the bytes moved per second (50M: 50 MiB/s; 0: no cap); change it while the copy runs with ringcp rate PID RATE",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int64]{p: &o.MaxRate} }},
	{field: "IOPrio", name: "ioprio", placeholder: "CLASS[:LEVEL]",
		usage: "I/O priority of every read and write: idle, be[:0-7] or rt[:0-7] (the mq-deadline and bfq schedulers honour it)",
		bind:  func(o *copier.Options) pflag.Value { return stringValue{&o.IOPrio} }},
	{field: "Yield", name: "yield",
		usage: "give the disk to other work: cut depth and rate while others wait on it, raise them when they no longer do",
		bind:  func(o *copier.Options) pflag.Value { return boolValue{&o.Yield} }},
	{field: "Extents", name: "extents", placeholder: "FILE",
		usage: "copy only the ranges listed in FILE (- reads stdin): one \"OFFSET LENGTH\" a line in bytes, or a JSON array of {\"offset\",\"length\"}; SRC offset = DST offset, DST must exist and keeps every other byte",
		bind: func(o *copier.Options) pflag.Value {
			return extentsValue{p: &o.Extents, set: &o.ExtentsSet, arg: new(string)}
		}},
	{field: "DirtyBitmap", name: "dirty-bitmap", placeholder: "NAME",
		usage: "with an NBD SRC: copy only what its dirty bitmap NAME marks dirty (qemu-nbd -B NAME, qemu-storage-daemon's bitmaps); a server without it is refused",
		bind:  func(o *copier.Options) pflag.Value { return nameValue{&o.DirtyBitmap} }},
	{field: "SyncGranule", name: "granule", placeholder: "SIZE",
		usage: "ringcp sync: the unit compared and written, a power of two from 4K to 64K (default 4K)",
		bind:  func(o *copier.Options) pflag.Value { return sizeValue[int]{&o.SyncGranule, true} }},
	{field: "Force", name: "force",
		usage: "write a DST that is in use (held by LVM/md, opened exclusively, behind a loop device) or a disk image, copy a SRC mounted read-write, create a file in /dev, try a copy that seems not to fit; never a mounted DST",
		bind:  func(o *copier.Options) pflag.Value { return boolValue{&o.Force} }},
}

// unboundFields are the Options fields no flag sets, and why; with
// optionFlags they name every field (TestEveryOptionBound).
var unboundFields = map[string]string{
	"Src":              "SRC, an operand",
	"Dst":              "DST, an operand",
	"LengthSet":        "set by --length",
	"DstSize":          "set by --dst-offset and --length, which keep the rest of DST (dd's conv=notrunc in ringcp dd)",
	"Progress":         "the library's counter; the command reads Plan.Status",
	"OnProgress":       "set from --progress (a format's renderer)",
	"ProgressInterval": "set from --progress-interval and the format's default",
	"Web.S3Profile":    "AWS_PROFILE says it, as for the AWS tools",
	"Web.Retries":      "httpobj's default (5 in a row without progress)",
	"Web.StallTimeout": "httpobj's default (30 s)",
	"Web.Logf":         "set by -v",
	"Stream.Stdin":     "the process's standard input",
	"Stream.Stdout":    "the process's standard output (DST -)",
	"Stream.Threads":   "all cores",
	"ExtentsSet":       "set by --extents",
	"Sync":             "set by ringcp sync",
	"ResumeProve":      "set by ringcp cdi-importer, whose resumed imports compare what was copied with the image",
}

// batchFlags name the BatchOptions fields that copier's errors may name.
var batchFlags = map[string]string{"Parallel": "--parallel", "MaxRate": "--max-rate"}

// defineOptionFlags defines on fs the flags named (all when none is) as
// setters of o's fields, with their defaults set.
func defineOptionFlags(fs *pflag.FlagSet, o *copier.Options, names ...string) {
	for _, f := range optionFlags {
		if len(names) > 0 && !contains(names, f.name) {
			continue
		}
		v := f.bind(o)
		if f.def != "" {
			v.Set(f.def) // the table's own defaults parse
		}
		flag := fs.VarPF(v, f.name, f.short, f.usage)
		if b, ok := v.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			flag.NoOptDefVal = "true"
		}
	}
}

// flagOf is the flag that sets an Options field, as messages say it;
// BatchOptions fields are named "BatchOptions.Parallel". "" for a field
// no flag sets.
func flagOf(field string) string {
	if f, ok := strings.CutPrefix(field, "BatchOptions."); ok {
		return batchFlags[f]
	}
	for _, f := range optionFlags {
		if f.field == field && f.words != "" {
			return f.words
		}
		if f.field == field {
			return "--" + f.name
		}
	}
	return ""
}

// flagWords rewrites "Options.Field" and "BatchOptions.Field" in the
// library's words to the flag.
var flagWords = func() *strings.Replacer {
	words := map[string]string{}
	for _, f := range optionFlags {
		words["Options."+f.field] = flagOf(f.field)
	}
	for f := range batchFlags {
		words["BatchOptions."+f] = flagOf("BatchOptions." + f)
	}
	return fieldReplacer(words)
}()
