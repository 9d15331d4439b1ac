package boot

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/u-root/u-root/pkg/cpio"
)

// moduleConfig is a distro-like config: the test's drivers as modules,
// no siw.
func moduleConfig() string {
	var b strings.Builder
	for _, s := range guestconf.ModuleConfig([]string{"rxe"}) {
		v := "y"
		if _, ok := guestconf.ConfigModules[s]; ok {
			v = "m"
		}
		b.WriteString("CONFIG_" + s + "=" + v + "\n")
	}
	b.WriteString("# CONFIG_RDMA_SIW is not set\n")
	return b.String()
}

func fakeModules(t *testing.T, names ...string) []string {
	dir := t.TempDir()
	var out []string
	for _, n := range names {
		p := filepath.Join(dir, n+".ko")
		os.WriteFile(p, []byte("module "+n), 0o644)
		out = append(out, p)
	}
	return out
}

func moduleNames() []string {
	var names []string
	for _, s := range guestconf.ModuleConfig([]string{"rxe"}) {
		if n, ok := guestconf.ConfigModules[s]; ok {
			names = append(names, n)
		}
	}
	return names
}

// TestModules: a kernel whose test drivers are modules boots with them in
// the initramfs, in the given order, with their parameters; siw, absent
// from its config, is reported as not available rather than refused; a
// module the config needs and the list lacks is refused by name; the key
// covers the modules' content.
func TestModules(t *testing.T) {
	o := opts(t, fakeQEMU(t, passingRun))
	o.BuildDir = fakeBuild(t, moduleConfig())
	o.Transports = []string{"rxe", "siw"}
	o.Modules = fakeModules(t, moduleNames()...)
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if why := p.guest.Unavailable["siw"]; !strings.Contains(why, "CONFIG_RDMA_SIW is not set") {
		t.Errorf("siw: %q", why)
	}
	if _, ok := p.guest.Unavailable["rxe"]; ok {
		t.Error("rxe unavailable")
	}
	res, err := p.Run(context.Background(), o.OutDir)
	if err != nil || res.Verdict != vocab.Pass {
		t.Fatalf("%v %+v", err, res)
	}
	f, err := os.Open(filepath.Join(o.OutDir, "initramfs.cpio"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(f))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, r := range recs {
		b, _ := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
		files[r.Name] = string(b)
	}
	var g guestconf.Config
	if err := json.Unmarshal([]byte(files[strings.TrimPrefix(guestconf.Path, "/")]), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Modules) != len(o.Modules) {
		t.Fatalf("guest modules %v", g.Modules)
	}
	for i, m := range g.Modules {
		want := moduleName(o.Modules[i])
		if m.Name != want || files[strings.TrimPrefix(m.Path, "/")] != "module "+want {
			t.Errorf("module %d: %+v, want %s in the initramfs", i, m, want)
		}
		if m.Name == "null_blk" && m.Params != "memory_backed=1 gb=1" {
			t.Errorf("null_blk params %q", m.Params)
		}
	}
	// The key covers the modules' bytes.
	os.WriteFile(o.Modules[0], []byte("rebuilt"), 0o644)
	p2, err := Prepare(context.Background(), o)
	if err != nil || p2.Key() == p.Key() {
		t.Errorf("a changed module keeps the key (%v)", err)
	}
	// rdma_rxe missing from the list: refused by name.
	var without []string
	for _, m := range o.Modules {
		if moduleName(m) != "rdma_rxe" {
			without = append(without, m)
		}
	}
	o.Modules = without
	if _, err := Prepare(context.Background(), o); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "CONFIG_RDMA_RXE=m without its module rdma_rxe") {
		t.Errorf("missing module: %v", err)
	}
	// Without modules, a config with =m is refused as before.
	o.Modules = nil
	if _, err := Prepare(context.Background(), o); !errors.Is(err, errs.ErrInput) {
		t.Errorf("modules config without modules: %v", err)
	}
}
