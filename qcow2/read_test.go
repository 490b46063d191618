package qcow2

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// shape makes an image in dir and returns its path.
type shape struct {
	name string
	make func(t *testing.T, dir string) string
}

// converted: a raw disk of mixed content through qemu-img convert with
// opts, then zero clusters and discards through qemu-io.
func converted(size int64, opts ...string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		src := filepath.Join(dir, "src.raw")
		sourceRaw(t, src, size, size)
		img := filepath.Join(dir, "img.qcow2")
		qemuImg(t, append(append([]string{"convert", "-O", "qcow2"}, opts...), src, img)...)
		return img
	}
}

// edited: a new image written by qemu-io: data, zero writes (-z), and
// discards, at offsets that split clusters and subclusters.
func edited(size string, createOpts string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		img := filepath.Join(dir, "img.qcow2")
		qemuImg(t, "create", "-q", "-f", "qcow2", "-o", createOpts, img, size)
		qemuIO(t, "qcow2", img,
			"write -P 0x11 0 3M",
			"write -z 512k 256k",
			"write -P 0x22 1000k 5k",
			"discard 2M 128k",
			"write -z 5M 1M",
			"write -P 0x33 6143k 2k",
			"write -P 0x44 7M 1536")
		return img
	}
}

// chain3: base <- mid <- top, qcow2 or raw base, the base shorter than
// the overlays, writes, zeros and discards in each layer.
func chain3(rawBase bool) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		base, bfmt := filepath.Join(dir, "base.qcow2"), "qcow2"
		if rawBase {
			base, bfmt = filepath.Join(dir, "base.raw"), "raw"
			sourceRaw(t, base, 3<<20+512, 7)
		} else {
			qemuImg(t, "create", "-q", "-f", "qcow2", base, "3M")
			qemuIO(t, "qcow2", base, "write -P 0xb1 0 3M", "write -z 1M 64k")
		}
		mid := filepath.Join(dir, "sub", "mid.qcow2")
		os.Mkdir(filepath.Dir(mid), 0o755)
		// A relative name, resolved against the overlay's folder.
		qemuImg(t, "create", "-q", "-f", "qcow2", "-b", "../"+filepath.Base(base), "-F", bfmt, "-o", "cluster_size=4k", mid, "6M")
		qemuIO(t, "qcow2", mid, "write -P 0xc2 100k 300k", "write -z 2M 64k", "write -P 0xc3 4M 100k")
		top := filepath.Join(dir, "top.qcow2")
		qemuImg(t, "create", "-q", "-f", "qcow2", "-b", mid, "-F", "qcow2", top, "8M")
		qemuIO(t, "qcow2", top, "write -P 0xd4 0 4k", "write -z 200k 64k", "discard 4M 64k", "write -P 0xd5 7M 1M")
		return top
	}
}

// dataFile: an image whose clusters are in an external raw data file.
func dataFile(raw bool) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		img := filepath.Join(dir, "img.qcow2")
		qemuImg(t, "create", "-q", "-f", "qcow2", "-o", fmt.Sprintf("data_file=%s,data_file_raw=%v", filepath.Join(dir, "img.data"), raw), img, "4M")
		qemuIO(t, "qcow2", img, "write -P 0x55 0 1M", "write -z 64k 64k", "write -P 0x66 3M 4k")
		return img
	}
}

func readShapes() []shape {
	s := []shape{}
	for _, cs := range []string{"512", "4k", "64k", "2M"} {
		s = append(s, shape{"v3/cluster=" + cs, converted(5<<20+512, "-o", "cluster_size="+cs)})
	}
	s = append(s,
		shape{"v2/compat=0.10", converted(5<<20, "-o", "compat=0.10")},
		shape{"v2/compat=0.10/512", converted(1<<20, "-o", "compat=0.10,cluster_size=512")},
		shape{"zlib/64k", converted(5<<20, "-c", "-o", "compression_type=zlib")},
		shape{"zlib/512", converted(1<<20, "-c", "-o", "compression_type=zlib,cluster_size=512")},
		shape{"zlib/2M", converted(5<<20, "-c", "-o", "compression_type=zlib,cluster_size=2M")},
		shape{"zstd/64k", converted(5<<20, "-c", "-o", "compression_type=zstd")},
		shape{"zstd/4k", converted(3<<20, "-c", "-o", "compression_type=zstd,cluster_size=4k")},
		shape{"zstd/2M", converted(5<<20, "-c", "-o", "compression_type=zstd,cluster_size=2M")},
		shape{"v2/zlib", converted(3<<20, "-c", "-o", "compat=0.10")},
		shape{"edited/v3", edited("8M", "cluster_size=64k")},
		shape{"edited/v2", edited("8M", "compat=0.10")},
		shape{"edited/extended_l2/64k", edited("8M", "extended_l2=on")},
		shape{"edited/extended_l2/2M", edited("8M", "extended_l2=on,cluster_size=2M")},
		shape{"edited/extended_l2/16k", edited("8M", "extended_l2=on,cluster_size=16k")},
		shape{"extended_l2/converted", converted(4<<20, "-o", "extended_l2=on")},
		shape{"chain3/qcow2", chain3(false)},
		shape{"chain3/raw", chain3(true)},
		shape{"data_file", dataFile(false)},
		shape{"data_file_raw", dataFile(true)},
		shape{"prealloc=metadata", converted(3<<20, "-o", "preallocation=metadata")},
	)
	return s
}

// TestReadShapes: every shape of image, read and mapped, against what
// qemu-img makes of it.
func TestReadShapes(t *testing.T) {
	needQemu(t)
	for _, s := range readShapes() {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			img := s.make(t, t.TempDir())
			want := rawOf(t, img)
			for _, lazy := range []bool{false, true} {
				im := openPath(t, img, Options{Lazy: lazy, CacheBytes: 1}) // a tiny cache: tables come and go
				checkRead(t, im, want)
				checkMap(t, im, img, want)
			}
		})
	}
}

// TestAwkwardSizes: virtual sizes of 0, 1, 511, 4097 and odd tails
// (QEMU rounds them up to 512), written by qemu-io to the last byte.
func TestAwkwardSizes(t *testing.T) {
	needQemu(t)
	for _, size := range []int64{0, 1, 511, 512, 4097, 65537, 1<<20 + 3} {
		for _, opts := range []string{"cluster_size=512", "cluster_size=64k", "extended_l2=on"} {
			t.Run(fmt.Sprintf("%d/%s", size, opts), func(t *testing.T) {
				img := filepath.Join(t.TempDir(), "img.qcow2")
				qemuImg(t, "create", "-q", "-f", "qcow2", "-o", opts, img, fmt.Sprint(size))
				if size > 0 {
					rounded := (size + 511) &^ 511
					qemuIO(t, "qcow2", img, fmt.Sprintf("write -P 0x7e %d 512", rounded-512))
				}
				want := rawOf(t, img)
				im := openPath(t, img, Options{})
				checkRead(t, im, want)
				checkMap(t, im, img, want)
				p := make([]byte, 10)
				if n, err := im.ReadAt(p, im.Size()); n != 0 || err == nil {
					t.Errorf("ReadAt at the size: %d, %v; want 0, EOF", n, err)
				}
			})
		}
	}
}
