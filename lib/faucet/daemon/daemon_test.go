package daemon

import (
	"net"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "0.0.0.0:80": false, "[::]:80": false, "192.0.2.1:80": false} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if isLoopback(a) != want {
			t.Errorf("isLoopback(%s) = %v", addr, !want)
		}
	}
}
