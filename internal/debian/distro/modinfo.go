package distro

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// Modinfo is a module's .modinfo section: key=value strings.
type Modinfo map[string][]string

// Get is the first value of key, or "".
func (m Modinfo) Get(key string) string {
	if v := m[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Depends lists the modules this one needs loaded first (depends=).
func (m Modinfo) Depends() []string {
	var out []string
	for _, d := range strings.Split(m.Get("depends"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, ModuleName(d))
		}
	}
	return out
}

// ParseModinfo reads the .modinfo section of a module (an ELF object).
func ParseModinfo(r io.ReaderAt) (Modinfo, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("not an ELF module: %w", err)
	}
	defer f.Close()
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("no .modinfo section: not a kernel module")
	}
	data, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("reading .modinfo: %w", err)
	}
	m := Modinfo{}
	for _, kv := range bytes.Split(data, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || k == "" {
			continue
		}
		m[k] = append(m[k], v)
	}
	return m, nil
}

// ReadModinfo reads the .modinfo of an uncompressed module file.
func ReadModinfo(path string) (Modinfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := ParseModinfo(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ModuleName is the kernel's name of a module file or name: no folder,
// no .ko[.xz|.zst|.gz], dashes as underscores.
func ModuleName(file string) string {
	n := filepath.Base(file)
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		n = strings.TrimSuffix(n, ext)
	}
	return strings.ReplaceAll(strings.TrimSuffix(n, ".ko"), "-", "_")
}

// Decompress writes the uncompressed module of src (.ko.xz through the xz
// tool, .ko copied) to dst.
func Decompress(ctx context.Context, src, dst string) error {
	switch {
	case strings.HasSuffix(src, ".ko"):
		return fsutil.CopyFile(src, dst)
	case strings.HasSuffix(src, ".ko.xz"):
	default:
		return fmt.Errorf("%s: a module is .ko or .ko.xz: %w", src, errs.ErrInput)
	}
	var out bytes.Buffer
	if err := (&command.Cmd{Name: "xz", Args: []string{"-dc", src}, Stdout: &out}).Run(ctx); err != nil {
		return fmt.Errorf("decompressing %s: %w (install xz-utils)", src, err)
	}
	return fsutil.WriteFile(dst, out.Bytes(), 0o644)
}

// VermagicMismatch says how a rebuilt module's vermagic differs from the
// kernel's ("" when it loads: equal strings, as the kernel compares them
// without modversions' CRCs).
func VermagicMismatch(module, kernel string) string {
	if strings.TrimSpace(module) == strings.TrimSpace(kernel) {
		return ""
	}
	return fmt.Sprintf("vermagic %q, the distro kernel's is %q", module, kernel)
}
