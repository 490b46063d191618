package blocksync

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// In a sticky folder all may write to, an end another user put there is
// refused before anything is written, as a copy refuses it, whatever
// fs.protected_symlinks and fs.protected_regular say (this machine has
// them off): a symlink to a victim's file, and a file the attacker made
// for the victim's SRC to land in.
func TestPlantedInSharedFolder(t *testing.T) {
	blocktest.NeedRoot(t)
	const nobody = 65534
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil || os.Chmod(shared, os.ModeSticky|0o777) != nil {
		t.Fatal(err)
	}
	victimPath := filepath.Join(t.TempDir(), "victim")
	victim := synctest.Random(61, 8192)
	synctest.WriteFile(t, victimPath, victim)
	link := filepath.Join(shared, "out.img")
	if err := os.Symlink(victimPath, link); err != nil || os.Lchown(link, nobody, nobody) != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(shared, "foreign.img")
	synctest.WriteFile(t, foreign, make([]byte, 8192))
	if err := os.Chown(foreign, nobody, nobody); err != nil || os.Chmod(foreign, 0o666) != nil {
		t.Fatal(err)
	}
	t.Run("DST symlink", func(t *testing.T) {
		dst, err := OpenTarget(link, TargetOptions{Create: true})
		if err == nil {
			dst.Close()
		}
		wantRefused(t, err, KindPermission, "symlink that uid 65534")
		synctest.Same(t, victimPath, victim)
	})
	t.Run("SRC symlink", func(t *testing.T) {
		src, err := OpenSource(link)
		if err == nil {
			src.Close()
		}
		wantRefused(t, err, KindPermission, "symlink that uid 65534")
	})
	t.Run("DST file another user made", func(t *testing.T) {
		dst, err := OpenTarget(foreign, TargetOptions{})
		if err == nil {
			dst.Close()
		}
		wantRefused(t, err, KindPermission, "file that uid 65534 made")
	})
}
