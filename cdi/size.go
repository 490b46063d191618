package cdi

import (
	"fmt"
	"math"
)

// alignSize is CDI's DefaultAlignBlockSize: the image on a filesystem
// volume is sized in whole MiB, so that qemu-img's rounding never takes
// more than the usable space.
const alignSize = 1 << 20

// Capacity is what CDI calls the available space: a block device's size;
// on a filesystem volume its free bytes, at most IMPORTER_IMAGE_SIZE when
// that is set. An image whose virtual size is larger is refused.
func (c *Config) Capacity(v Volume) int64 {
	if v.Mode == Filesystem && c.ImageSizeSet && c.ImageSize < v.Available {
		return c.ImageSize
	}
	return v.Available
}

// UsableSpace is CDI's GetUsableSpace: capacity less the filesystem
// overhead, counted as a fraction of the space the image leaves (the
// overhead is reversed: capacity / (1 + overhead), rounded up), then
// rounded down to whole MiB. The float arithmetic is CDI's, so that both
// importers give a volume the same image size.
func UsableSpace(overhead float64, capacity int64) int64 {
	spaceWithoutOverhead := int64(math.Ceil(float64(capacity) / (1 + overhead)))
	return spaceWithoutOverhead / alignSize * alignSize
}

// TargetSize is the size DST has after an import of an image of
// virtualSize bytes, as CDI's importer leaves it:
//   - a block volume keeps its size; the image must fit in it;
//   - on a filesystem volume the image must fit in Capacity; when
//     IMPORTER_IMAGE_SIZE is set, an image smaller than the usable space
//     (UsableSpace) is grown to it (the disk the user asked for, less the
//     filesystem's overhead), a larger one is left as it is.
//
// An image too large is a *Refusal whose text holds CDI's words ("is
// larger than the reported available storage"), which CDI's controller
// shows as "DataVolume too small to contain image".
func (c *Config) TargetSize(v Volume, virtualSize int64) (int64, error) {
	capacity := c.Capacity(v)
	if virtualSize > capacity {
		return 0, &Refusal{Name: "image", Reason: fmt.Sprintf(
			"virtual image size %d is larger than the reported available storage %d. A larger PVC is required",
			virtualSize, capacity)}
	}
	if v.Mode == Block {
		return v.Available, nil
	}
	if c.ImageSizeSet {
		if usable := UsableSpace(c.FilesystemOverhead, capacity); virtualSize < usable {
			return usable, nil
		}
	}
	return virtualSize, nil
}

// BlankSize is the size of a blank disk (IMPORTER_SOURCE none): on a
// filesystem volume a sparse disk.img of the usable space of
// min(free bytes, IMPORTER_IMAGE_SIZE); on a block volume the part of the
// device that preallocation writes zeros over, min(device size,
// IMPORTER_IMAGE_SIZE) (without preallocation a blank block volume is
// left as it is).
func (c *Config) BlankSize(v Volume) int64 {
	capacity := min(v.Available, c.ImageSize)
	if v.Mode == Block {
		return capacity
	}
	return UsableSpace(c.FilesystemOverhead, capacity)
}
