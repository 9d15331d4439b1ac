// Package boot runs the nvmet-rdma loopback tests in QEMU: it builds the
// guest agent (qemu/agent, a static Go PID 1) into an initramfs with
// u-root's cpio writer, boots the built kernel under KVM when /dev/kvm is
// usable and TCG otherwise, with no network beyond the VM, captures the
// serial console to a log, enforces a timeout per phase (killing a hung VM
// and keeping the console's tail), detects kernel splats, and parses the
// agent's KTAP results into a verdict. The exact QEMU command line is in
// the result, so a failure can be reproduced by hand.
package boot
