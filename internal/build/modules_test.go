package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/kconfig"
)

// fakeModule compiles an object whose .modinfo says what it depends on,
// named as kbuild names a module.
func fakeModule(t *testing.T, dir, file, depends string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "m.c")
	os.WriteFile(src, []byte(`__attribute__((section(".modinfo"), used)) static const char d[] = "license=GPL\0depends=`+depends+`\0name=x";`+"\n"), 0o644)
	out := filepath.Join(dir, file)
	os.MkdirAll(filepath.Dir(out), 0o755)
	if b, err := exec.Command("gcc", "-c", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
}

func TestModuleLoadOrder(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	fakeModule(t, dir, "drivers/nvme/host/nvme-core.ko", "")
	fakeModule(t, dir, "drivers/nvme/host/nvme-fabrics.ko", "nvme-core")
	fakeModule(t, dir, "drivers/nvme/host/nvme-rdma.ko", "nvme-fabrics,nvme-core")
	fakeModule(t, dir, "net/ipv4/udp_tunnel.ko", "")
	fakeModule(t, dir, "drivers/infiniband/sw/rxe/rdma_rxe.ko", "udp_tunnel")
	// 6.2 and later list objects; the order is kbuild's, not load order.
	os.WriteFile(filepath.Join(dir, "modules.order"), []byte("drivers/infiniband/sw/rxe/rdma_rxe.o\ndrivers/nvme/host/nvme-rdma.o\ndrivers/nvme/host/nvme-fabrics.o\ndrivers/nvme/host/nvme-core.o\nnet/ipv4/udp_tunnel.o\n"), 0o644)
	built, err := builtModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	order, err := loadOrder([]string{"nvme_rdma", "rdma_rxe"}, built)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ko := range order {
		names = append(names, modName(ko))
	}
	if got, want := strings.Join(names, " "), "nvme_core nvme_fabrics nvme_rdma udp_tunnel rdma_rxe"; got != want {
		t.Errorf("load order %q, want %q", got, want)
	}
	if _, err := loadOrder([]string{"siw"}, built); err == nil || !strings.Contains(err.Error(), "siw") {
		t.Errorf("a configured module the build did not make: %v", err)
	}
	fakeModule(t, dir, "drivers/infiniband/sw/siw/siw.ko", "ib_uverbs")
	built["siw"] = filepath.Join(dir, "drivers/infiniband/sw/siw/siw.ko")
	if _, err := loadOrder([]string{"siw"}, built); err == nil || !strings.Contains(err.Error(), "ib_uverbs") {
		t.Errorf("a missing dependency: %v", err)
	}
}

func TestTestModulesFollowConfig(t *testing.T) {
	cfg, err := kconfig.Parse("x", strings.NewReader("CONFIG_RDMA_RXE=m\nCONFIG_RDMA_SIW=y\nCONFIG_NVME_RDMA=m\nCONFIG_NVME_TARGET_RDMA=m\nCONFIG_NVME_CORE=m\nCONFIG_NVME_TARGET=y\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(testModules(cfg), " ")
	for _, want := range []string{"rdma_rxe", "nvme_rdma", "nvmet_rdma", "nvme_core"} {
		if !strings.Contains(got, want) {
			t.Errorf("test modules %q lack %s", got, want)
		}
	}
	for _, not := range []string{"siw", "nvmet "} {
		if strings.Contains(got+" ", not) {
			t.Errorf("test modules %q hold built-in %s", got, not)
		}
	}
}
