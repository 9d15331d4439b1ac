package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// PinImage copies a variant's kernel image (variants/<variant> of a
// build folder) to dst and checks the copy against the hash its build
// recorded, so that every boot of a bench boots the one image even when
// another build of the same kernel runs meanwhile. It returns the copy's
// hash. A copy caught while a build replaced the snapshot is tried once
// more.
func PinImage(variantDir, dst string) (string, error) {
	var last error
	for try := 0; try < 2; try++ {
		b, err := os.ReadFile(filepath.Join(variantDir, "metadata.json"))
		if err != nil {
			return "", fmt.Errorf("reading the build's record in %s: %w: %w", variantDir, err, errs.ErrInput)
		}
		var md build.Metadata
		if err := json.Unmarshal(b, &md); err != nil {
			return "", fmt.Errorf("reading %s: %w: %w", filepath.Join(variantDir, "metadata.json"), err, errs.ErrInput)
		}
		want := md.SHA256["bzImage"]
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("pinning the kernel image: %w", err)
		}
		if err := fsutil.CopyFile(filepath.Join(variantDir, "bzImage"), dst); err != nil {
			return "", fmt.Errorf("pinning the kernel image: %w", err)
		}
		got, err := fsutil.HashFile(dst)
		if err != nil {
			return "", fmt.Errorf("pinning the kernel image: %w", err)
		}
		if want == "" || got == want {
			return got, nil
		}
		last = fmt.Errorf("the kernel image in %s is not the one its build recorded (sha256 %.12s, recorded %.12s): a build of this kernel is running; wait for it and run again: %w", variantDir, got, want, errs.ErrEnv)
	}
	return "", last
}
