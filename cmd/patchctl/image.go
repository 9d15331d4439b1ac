package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/distro"
	"github.com/patchctl/patchctl/internal/errs"
)

// imageHelp is the --image flag's help, on boot and bench.
const imageHelp = "the image to boot: an image id (as build, run and try print it), an image folder, or a run's or try's output folder (default: the build of the series of record)"

// chosenImage is the image a boot or bench uses, verified.
type chosenImage struct {
	md *build.Metadata
	// ofRecord: the image is the series of record's build of the
	// variant, so the manifest's inline expectations judge it.
	ofRecord bool
}

// image resolves the image of variant that a boot or bench uses: ref
// (--image) when given, else the build of the series of record (its
// snapshot, by the source state the manifest's series makes, never the
// latest build of the cache, which any process may have made). The image
// is verified against its record (sha256).
func (t *target) image(ctx context.Context, ref, variant, from string, fragments []string, buildCmd string) (*chosenImage, error) {
	applied, err := t.applied(ctx, "")
	if err != nil {
		return nil, err
	}
	state := applied.State(variant)
	if ref != "" {
		kernel := t.k.Name
		md, err := build.ResolveImage(t.cache.Dir, ref, kernel, variant)
		if err != nil {
			return nil, err
		}
		if md.Variant != variant {
			return nil, fmt.Errorf("--image %s is a %s image, not %s: pass --variant %s or another image: %w", ref, md.Variant, variant, md.Variant, errs.ErrUsage)
		}
		if md.Kernel != t.k.Name {
			return nil, fmt.Errorf("--image %s is an image of %s, not %s: pass --kernel %s: %w", ref, md.Kernel, t.k.Name, md.Kernel, errs.ErrUsage)
		}
		return &chosenImage{md: md, ofRecord: md.State == state}, nil
	}
	var dir string
	if from == build.FromDistro {
		folder, err := distro.ImageFolderOf(ctx, t.cache, t.k)
		if err != nil {
			return nil, err
		}
		dir = build.StateDir(folder, variant, state)
	} else {
		bd, err := build.Locate(t.root, t.cache, t.k, applied, fragments)
		if err != nil {
			return nil, err
		}
		dir = build.StateDir(bd, variant, state)
	}
	if from == build.FromDistro {
		buildCmd += " --kernel-from distro"
	}
	if _, err := os.Stat(filepath.Join(dir, "metadata.json")); err != nil {
		return nil, fmt.Errorf("the series of record's %s %s kernel is not built yet (no image %s): run `%s` first, or name another image with --image: %w",
			t.k.Name, variant, build.ImageID(t.cache.Dir, dir), buildCmd, errs.ErrInput)
	}
	md, err := build.LoadImage(dir)
	if err != nil {
		return nil, fmt.Errorf("the series of record's %s %s image: %w (rebuild it: `%s`)", t.k.Name, variant, err, buildCmd)
	}
	if md.ID == "" {
		md.ID = build.ImageID(t.cache.Dir, dir)
	}
	return &chosenImage{md: md, ofRecord: true}, nil
}
