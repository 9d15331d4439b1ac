package main

import (
	"fmt"
	"time"

	"github.com/vishvananda/netlink"
)

// setupNetwork brings lo and eth0 up and gives eth0 the test address. The
// NIC is QEMU's restricted user network: nothing leaves the VM, and the
// RDMA traffic to the guest's own address never leaves the guest.
func setupNetwork(cidr string) error {
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		_ = netlink.LinkSetUp(lo) // a link that stays down fails the transport's setup
	}
	var eth netlink.Link
	for i := 0; i < 50; i++ {
		if eth, err = netlink.LinkByName("eth0"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("no eth0: %w", err)
	}
	addr, err := netlink.ParseAddr(cidr)
	if err != nil {
		return err
	}
	if err := netlink.AddrReplace(eth, addr); err != nil {
		return fmt.Errorf("address %s on eth0: %w", cidr, err)
	}
	return netlink.LinkSetUp(eth)
}

// linkName is the RDMA device name for a transport.
func linkName(transport string) string { return transport + "0" }

// addRDMALink creates the soft-RoCE (rxe) or soft-iWARP (siw) device on
// eth0, as `rdma link add` does.
func addRDMALink(transport string) error {
	if err := netlink.RdmaLinkAdd(linkName(transport), transport, "eth0"); err != nil {
		return fmt.Errorf("rdma link add %s type %s netdev eth0: %w", linkName(transport), transport, err)
	}
	for i := 0; i < 50; i++ {
		if _, err := netlink.RdmaLinkByName(linkName(transport)); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not appear", linkName(transport))
}

func delRDMALink(transport string) error {
	return netlink.RdmaLinkDel(linkName(transport))
}
