package cdi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkHeader wants "Name: value" on one line. CDI's importer silently
// drops a header without a colon; a header the user asked for and that is
// not sent is refused here instead.
func checkHeader(h string) error {
	name, _, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return errors.New("is not an HTTP header 'Name: value'")
	}
	if strings.ContainsAny(h, "\r\n") {
		return errors.New("holds a line break")
	}
	return nil
}

// SecretHeaders reads the extra headers CDI mounts from Secrets: every
// file under dir (CDI's /extraheaders/N/, one directory per Secret, one
// file per key), each file one header. A Secret volume's own entries
// (..data, ..2024_...) are skipped, as CDI skips every name starting with
// a dot. They come in the order of their paths. A missing dir is no
// header. The headers are secret: an error
// names the file, never its content.
func SecretHeaders(dir string) ([]string, error) {
	var headers []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipDir
			}
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		// A Secret's key is a symbolic link into ..data: follow it.
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		h := strings.TrimRight(string(raw), "\r\n")
		if err := checkHeader(h); err != nil {
			return fmt.Errorf("the extra header in %s %v", path, err)
		}
		headers = append(headers, h)
		return nil
	})
	if err != nil {
		return nil, refuse("extra headers", "", "cannot be read: "+err.Error())
	}
	return headers, nil
}
