package guestconf

import "testing"

// TestDebugSplats: the first line of each report the debug fragment's
// detectors print (KASAN, KFENCE, lockdep, UBSAN, as the kernels print
// them) fails the dmesg gate; ordinary lines do not.
func TestDebugSplats(t *testing.T) {
	for _, l := range []string{
		"[   12.345678] BUG: KASAN: slab-use-after-free in nvmet_rdma_handle_command+0x1c/0x90 [nvmet_rdma]",
		"[   12.345678] BUG: KFENCE: use-after-free read in uaf_test+0x12/0x30",
		"[   12.345678] WARNING: possible circular locking dependency detected",
		"[   12.345678] WARNING: possible recursive locking detected",
		"[   12.345678] UBSAN: array-index-out-of-bounds in drivers/nvme/target/rdma.c:313:9",
		"[   12.345678] UBSAN: shift-out-of-bounds in lib/test.c:10:5",
	} {
		if SplatIn(l) == "" {
			t.Errorf("not a splat: %s", l)
		}
	}
	for _, l := range []string{"[    0.000000] kasan: KernelAddressSanitizer initialized (generic)", "[    0.1] kfence: initialized - using 2097152 bytes for 255 objects"} {
		if p := SplatIn(l); p != "" {
			t.Errorf("%q taken for a splat (%s)", l, p)
		}
	}
}
