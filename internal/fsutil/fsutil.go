// Package fsutil holds the file operations every stage shares: atomic
// writes (a reader sees the old file or the new one, never a part) and
// content hashes of files.
package fsutil

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile writes data to path atomically: into a temporary file in the
// same folder, synced, then renamed over path. On error nothing is left
// behind and path is unchanged.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write is WriteFile for content that is produced by fill.
func Write(path string, perm os.FileMode, fill func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteJSON writes v as indented JSON, atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return WriteFile(path, append(b, '\n'), 0o644)
}

// CopyFile copies src to dst atomically.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return Write(dst, 0o644, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// HashFile returns the hex sha256 of a file's content.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Hash returns the hex sha256 of data.
func Hash(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ValidName checks a name that becomes one component of a path (a kernel,
// series or fragment name): not empty, not . or .., no separator, no
// control character, at most 100 bytes.
func ValidName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty name")
	case s == "." || s == "..":
		return fmt.Errorf("name %q is a folder reference", s)
	case len(s) > 100:
		return fmt.Errorf("name %.20q... is longer than 100 bytes", s)
	}
	for _, r := range s {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return fmt.Errorf("name %q holds a separator or a control character", s)
		}
	}
	return nil
}

// ValidRel checks a relative slash path inside a folder: not absolute, no
// empty, . or .. component, no control character.
func ValidRel(p string) error {
	if p == "" || p[0] == '/' {
		return fmt.Errorf("path %q is empty or absolute", p)
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("path %q leaves its folder or has an empty component", p)
		}
		if err := ValidName(c); err != nil {
			return fmt.Errorf("path %q: %w", p, err)
		}
	}
	return nil
}
