package cdi

// VolumeMode is a PVC's volumeMode.
type VolumeMode string

// Volume modes.
const (
	Filesystem VolumeMode = "Filesystem"
	Block      VolumeMode = "Block"
)

// Volume is the target volume as the importer finds it.
type Volume struct {
	Mode VolumeMode
	// Path is where the image goes: DataDir/disk.img or the block device.
	Path string
	// Dir is the filesystem volume's mount ("" for a block volume).
	Dir string
	// Available is what CDI measures before the import: a block device's
	// size, or the bytes a filesystem volume has free for an unprivileged
	// user (statfs f_bavail * f_bsize).
	Available int64
}
