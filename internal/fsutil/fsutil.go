// Package fsutil holds the file operations every stage shares: atomic
// writes (a reader sees the old file or the new one, never a part) and
// content hashes of files, and the checks that keep writes inside the
// folder they belong to.
package fsutil

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
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

// Name and path limits of Linux file systems (NAME_MAX, PATH_MAX - 1).
const (
	MaxNameBytes = 255
	MaxPathBytes = 4095
)

// CheckBeneath checks that the slash path rel, to be written under root,
// stays under root: it is relative, has no empty, . or .. component and
// no NUL byte, its names fit the file system (255 bytes each, 4095 in
// all), and every folder on its way that exists is a real folder: not a
// symbolic link (which could lead out of root; git apply refuses a path
// "beyond a symbolic link" too) and not a file. The last component itself
// may be anything: it is replaced by rename, never written through.
// Errors wrap errs.ErrInput: the path comes from a patch or a tree given
// to patchctl.
func CheckBeneath(root, rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return fmt.Errorf("path %q is empty or absolute: a patch may only name files inside the tree: %w", rel, errs.ErrInput)
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return fmt.Errorf("path %q holds a NUL byte: %w", rel, errs.ErrInput)
	}
	if len(root)+1+len(rel) > MaxPathBytes {
		return fmt.Errorf("path %.40q... is %d bytes long inside %s, more than the file system's %d: %w", rel, len(rel), root, MaxPathBytes, errs.ErrInput)
	}
	comps := strings.Split(rel, "/")
	for _, c := range comps {
		switch {
		case c == "" || c == "." || c == "..":
			return fmt.Errorf("path %q leaves the tree or has an empty component: %w", rel, errs.ErrInput)
		case len(c) > MaxNameBytes:
			return fmt.Errorf("path %.40q... has a name of %d bytes, more than the file system's %d: %w", rel, len(c), MaxNameBytes, errs.ErrInput)
		}
	}
	dir := root
	for i, c := range comps[:len(comps)-1] {
		dir = filepath.Join(dir, c)
		st, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // made by the write, as a real folder
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", dir, err)
		}
		at := strings.Join(comps[:i+1], "/")
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("path %q goes through %s, a symbolic link: patchctl writes only into real folders of the tree (git apply refuses it too): %w", rel, at, errs.ErrInput)
		case !st.IsDir():
			return fmt.Errorf("path %q goes through %s, which is a file, not a folder: %w", rel, at, errs.ErrInput)
		}
	}
	return nil
}
