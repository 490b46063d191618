package cdi

import (
	"path/filepath"

	"github.com/spf13/pflag"
)

// CDI's fixed paths in the importer container (pkg/common/common.go).
const (
	DefaultDataDir          = "/data"                 // a filesystem volume's mount
	DiskImageName           = "disk.img"              // the image on it
	DefaultBlockDevice      = "/dev/cdi-block-volume" // a block volume's device
	DefaultScratchDir       = "/scratch"              // scratch space, when the controller made some
	DefaultTerminationLog   = "/dev/termination-log"  // the kubelet's terminationMessagePath
	DefaultMetricsAddr      = ":8443"                 // the port named "metrics"
	DefaultSecretHeadersDir = "/extraheaders"         // Secrets of extra HTTP headers
	DefaultStateName        = "disk.img.ringcp-state" // the resume state beside the image
	BlockStateName          = "ringcp-block-state"    // the resume state of a block volume, in scratch
	DefaultDelegateImporter = "/usr/bin/cdi-importer" // CDI's importer, in an image built on CDI's
)

// Paths are where the importer finds its volume and writes its results.
// The defaults are CDI's; tests and other platforms move them with flags.
type Paths struct {
	DataDir          string
	BlockDevice      string
	ScratchDir       string
	TerminationLog   string
	MetricsAddr      string
	SecretHeadersDir string
	// Delegate, when it names an executable, runs the imports ringcp
	// does not serve (IsUnserved), in ringcp's place and with its
	// arguments and environment: CDI's own importer, in an image built on
	// CDI's. "" refuses them.
	Delegate string
	// Verbosity is klog's -v=N, which CDI's controller passes to every
	// importer it starts.
	Verbosity int
}

// DefaultPaths are CDI's.
func DefaultPaths() Paths {
	return Paths{
		DataDir: DefaultDataDir, BlockDevice: DefaultBlockDevice, ScratchDir: DefaultScratchDir,
		TerminationLog: DefaultTerminationLog, MetricsAddr: DefaultMetricsAddr,
		SecretHeadersDir: DefaultSecretHeadersDir,
	}
}

// DiskImage is the image's path on a filesystem volume.
func (p Paths) DiskImage() string { return filepath.Join(p.DataDir, DiskImageName) }

// AddFlags defines the importer's flags on fs, bound to p (whose values
// are the defaults shown). It defines -v, --verbosity as klog's level
// (CDI passes "-v=1"; "-v" alone is 1, so a level is given with "="): fs must not have ringcp's boolean
// -v, which would refuse "-v=5". ringcp's other flags (--max-rate,
// --ioprio, --yield...) go on the same set beside these.
func (p *Paths) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.DataDir, "data-dir", p.DataDir, "the filesystem volume's mount (the image is DIR/"+DiskImageName+")")
	fs.StringVar(&p.BlockDevice, "block-device", p.BlockDevice, "the block volume's device; when it exists the volume is a block volume")
	fs.StringVar(&p.ScratchDir, "scratch-dir", p.ScratchDir, "scratch space: never used for the image; holds a block volume's resume state when it exists")
	fs.StringVar(&p.TerminationLog, "termination-log", p.TerminationLog, "where the result is written for the kubelet")
	fs.StringVar(&p.MetricsAddr, "metrics-addr", p.MetricsAddr, "HOST:PORT of the HTTPS progress endpoint")
	fs.StringVar(&p.SecretHeadersDir, "extra-headers-dir", p.SecretHeadersDir, "the directory of Secrets of extra HTTP headers")
	fs.StringVar(&p.Delegate, "delegate", p.Delegate, "an importer to run for the sources ringcp does not serve (CDI's "+DefaultDelegateImporter+")")
	fs.IntVarP(&p.Verbosity, "verbosity", "v", p.Verbosity, "log level, as klog's -v")
	fs.Lookup("verbosity").NoOptDefVal = "1"
}
