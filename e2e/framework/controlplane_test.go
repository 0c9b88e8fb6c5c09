package framework

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortsAreDistinctBindableAndBelowTheEphemeralRange(t *testing.T) {
	low, high := freePortRange()
	if low >= high {
		t.Fatalf("freePortRange() = [%d, %d), want a non-empty range", low, high)
	}
	ports, err := freePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 6 {
		t.Fatalf("freePorts(6) returned %d ports: %v", len(ports), ports)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if seen[port] {
			t.Errorf("port %d returned twice: %v", port, ports)
		}
		seen[port] = true
		if port < low || port >= high {
			t.Errorf("port %d is outside [%d, %d)", port, low, high)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Errorf("port %d is not free after freePorts returned it: %v", port, err)
			continue
		}
		_ = l.Close()
	}
}
