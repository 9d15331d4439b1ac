package debian_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestAptRealSuites asks Debian (the machine's mirror, through patchctl's
// own apt state in the user's cache) what every pinned suite serves, and
// checks that /etc/apt is byte for byte what it was. A pin that Debian
// has moved past is logged, not failed: the scheduled `tree pin --check`
// job is the alarm for that.
func TestAptRealSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no network")
	}
	before := hashTree(t, "/etc/apt")
	lock, err := tree.LoadLock(filepath.Join(testenv.RepoRoot(t), "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Cache()
	ctx := context.Background()
	updated := map[string]bool{}
	for i := range lock.Kernels {
		k := &lock.Kernels[i]
		if k.Debian == nil || k.Debian.Suite == "" {
			continue
		}
		if !updated[k.Debian.Suite] {
			if err := c.Debian().UpdateSuite(ctx, k.Debian.Suite); err != nil {
				testenv.Unavailable(t, err.Error())
			}
			updated[k.Debian.Suite] = true
		}
		st, err := c.Debian().CheckPin(ctx, k.Name, k.Debian)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if len(st.Served.SHA256) != 64 || st.Served.Version == "" || st.Served.Size < 50<<20 {
			t.Errorf("%s: served %+v", k.Name, st.Served)
		}
		if st.Stale != "" {
			t.Logf("%s: stale pin: %s (patchctl tree pin --kernel %s)", k.Name, st.Stale, k.Name)
		}
	}
	if hashTree(t, "/etc/apt") != before {
		t.Fatal("/etc/apt changed")
	}
}
