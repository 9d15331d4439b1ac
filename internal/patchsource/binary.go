package patchsource

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"strings"

	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// onePatch is a diff.Patch of one file, to encode files one at a time.
type onePatch struct{ fp fdiff.FilePatch }

func (p onePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p onePatch) Message() string                { return "" }

// encodeDiff writes the commit's diff as git format-patch --binary does:
// text files as go-git's unified encoder writes them, binary files as a
// "GIT binary patch" of literal contents (both directions, so git apply
// -R works too) instead of go-git's "Binary files differ", which carries
// no data and which no tool can apply. from and to are the trees before
// and after (from is nil for a root commit).
func encodeDiff(patch *object.Patch, from, to *object.Tree) ([]byte, error) {
	var out bytes.Buffer
	for _, fp := range patch.FilePatches() {
		var b bytes.Buffer
		if err := fdiff.NewUnifiedEncoder(&b, fdiff.DefaultContextLines).Encode(onePatch{fp}); err != nil {
			return nil, err
		}
		if !fp.IsBinary() {
			out.Write(b.Bytes())
			continue
		}
		head, _, ok := cutLastLine(b.String(), "Binary files ")
		if !ok {
			out.Write(b.Bytes()) // no content change (a rename or mode change only)
			continue
		}
		a, z := fp.Files()
		oldData, err := blobOf(from, a)
		if err != nil {
			return nil, err
		}
		newData, err := blobOf(to, z)
		if err != nil {
			return nil, err
		}
		out.WriteString(head)
		out.WriteString("GIT binary patch\n")
		if err := writeLiteral(&out, newData); err != nil {
			return nil, err
		}
		if err := writeLiteral(&out, oldData); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// cutLastLine splits s before its last line when that line starts with
// prefix.
func cutLastLine(s, prefix string) (head, last string, ok bool) {
	t := strings.TrimSuffix(s, "\n")
	i := strings.LastIndexByte(t, '\n') + 1
	if !strings.HasPrefix(t[i:], prefix) {
		return s, "", false
	}
	return t[:i], t[i:], true
}

func blobOf(tree *object.Tree, f fdiff.File) ([]byte, error) {
	if f == nil || tree == nil {
		return nil, nil
	}
	file, err := tree.File(f.Path())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Path(), err)
	}
	s, err := file.Contents()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Path(), err)
	}
	return []byte(s), nil
}

// writeLiteral writes one "literal N" block of a git binary patch: the
// data deflated (zlib), in lines of at most 52 bytes, each a length
// character and git's base85, then an empty line.
func writeLiteral(w *bytes.Buffer, data []byte) error {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "literal %d\n", len(data))
	deflated := z.Bytes()
	for len(deflated) > 0 {
		n := min(len(deflated), 52)
		if n <= 26 {
			w.WriteByte(byte('A' + n - 1))
		} else {
			w.WriteByte(byte('a' + n - 27))
		}
		w.WriteString(base85(deflated[:n]))
		w.WriteByte('\n')
		deflated = deflated[n:]
	}
	w.WriteByte('\n')
	return nil
}

const base85Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// base85 is git's base85 (base85.c): each 4 bytes, big-endian, as 5
// characters, the last group padded with zero bytes.
func base85(data []byte) string {
	var b strings.Builder
	for len(data) > 0 {
		var group [4]byte
		n := copy(group[:], data)
		data = data[n:]
		v := binary.BigEndian.Uint32(group[:])
		var enc [5]byte
		for i := 4; i >= 0; i-- {
			enc[i] = base85Chars[v%85]
			v /= 85
		}
		b.Write(enc[:])
	}
	return b.String()
}
