package boot

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// KVM ioctls (linux/kvm.h).
const (
	kvmGetAPIVersion     = 0xAE00
	kvmCreateVM          = 0xAE01
	kvmGetVCPUMmapSize   = 0xAE04
	kvmCreateVCPU        = 0xAE41
	kvmSetUserMemRegion  = 0x4020AE46
	kvmRun               = 0xAE80
	kvmGetRegs           = 0x8090AE81
	kvmSetRegs           = 0x4090AE82
	kvmGetSregs          = 0x8138AE83
	kvmSetSregs          = 0x4138AE84
	kvmExitHLT           = 5
	kvmGetSupportedCPUID = 0xC008AE05
	kvmProbeTimeout      = 2 * time.Second
	kvmRegsSize          = 18 * 8
	kvmSregsSize         = 312
	kvmRegsRIP, kvmRegsF = 16, 17
)

// kvmRunsCode reports whether KVM really runs guest code here: it makes a
// VM whose only instruction is hlt and waits for the HLT exit. Opening
// /dev/kvm is not enough: under a broken nested setup the ioctls succeed
// and the guest never runs.
func kvmRunsCode() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	done := make(chan bool, 1)
	go func() { done <- kvmProbe(f.Fd()) }()
	select {
	case ok := <-done:
		f.Close()
		return ok
	case <-time.After(kvmProbeTimeout):
		return false // the vCPU never came back: KVM is not usable
	}
}

func ioctl(fd, req, arg uintptr) (uintptr, error) {
	r, _, e := unix.Syscall(unix.SYS_IOCTL, fd, req, arg)
	if e != 0 {
		return r, e
	}
	return r, nil
}

func kvmProbe(kvm uintptr) bool {
	if v, err := ioctl(kvm, kvmGetAPIVersion, 0); err != nil || v != 12 {
		return false
	}
	if !kvmBaselineCPUID(kvm) {
		return false
	}
	vm, err := ioctl(kvm, kvmCreateVM, 0)
	if err != nil {
		return false
	}
	defer unix.Close(int(vm))
	mem, err := unix.Mmap(-1, 0, 0x1000, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	if err != nil {
		return false
	}
	defer unix.Munmap(mem)
	mem[0] = 0xf4 // hlt
	region := struct {
		slot, flags                uint32
		guestPhys, size, userspace uint64
	}{0, 0, 0, 0x1000, uint64(uintptr(unsafe.Pointer(&mem[0])))}
	if _, err := ioctl(vm, kvmSetUserMemRegion, uintptr(unsafe.Pointer(&region))); err != nil {
		return false
	}
	vcpu, err := ioctl(vm, kvmCreateVCPU, 0)
	if err != nil {
		return false
	}
	defer unix.Close(int(vcpu))
	size, err := ioctl(kvm, kvmGetVCPUMmapSize, 0)
	if err != nil {
		return false
	}
	run, err := unix.Mmap(int(vcpu), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return false
	}
	defer unix.Munmap(run)
	// Real mode at address 0: code segment base 0, selector 0, rip 0.
	var sregs [kvmSregsSize]byte
	if _, err := ioctl(vcpu, kvmGetSregs, uintptr(unsafe.Pointer(&sregs[0]))); err != nil {
		return false
	}
	for i := 0; i < 8; i++ {
		sregs[i] = 0 // cs.base
	}
	sregs[12], sregs[13] = 0, 0 // cs.selector
	if _, err := ioctl(vcpu, kvmSetSregs, uintptr(unsafe.Pointer(&sregs[0]))); err != nil {
		return false
	}
	var regs [18]uint64
	if _, err := ioctl(vcpu, kvmGetRegs, uintptr(unsafe.Pointer(&regs[0]))); err != nil {
		return false
	}
	regs[kvmRegsRIP], regs[kvmRegsF] = 0, 2
	if _, err := ioctl(vcpu, kvmSetRegs, uintptr(unsafe.Pointer(&regs[0]))); err != nil {
		return false
	}
	if _, err := ioctl(vcpu, kvmRun, 0); err != nil {
		return false
	}
	return *(*uint32)(unsafe.Pointer(&run[8])) == kvmExitHLT
}

// kvmBaselineCPUID checks that KVM offers the guest SSE3 (CPUID leaf 1,
// ECX bit 0), which every x86-64 CPU since 2004 has. A nested KVM that
// leaves it out runs a hlt but not a kernel (seen: the guest never prints).
func kvmBaselineCPUID(kvm uintptr) bool {
	const n = 128
	buf := make([]byte, 8+n*40)
	*(*uint32)(unsafe.Pointer(&buf[0])) = n
	if _, err := ioctl(kvm, kvmGetSupportedCPUID, uintptr(unsafe.Pointer(&buf[0]))); err != nil {
		return false
	}
	nent := *(*uint32)(unsafe.Pointer(&buf[0]))
	for i := uint32(0); i < nent && i < n; i++ {
		e := buf[8+i*40:]
		function := *(*uint32)(unsafe.Pointer(&e[0]))
		ecx := *(*uint32)(unsafe.Pointer(&e[20]))
		if function == 1 {
			return ecx&1 != 0
		}
	}
	return false
}
