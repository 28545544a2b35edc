//go:build !unix

package h1

import "net"

// alive cannot look at a connection without reading from it here: it takes
// it as alive, and a request that fails on it is sent again if it can be
// (see RoundTrip).
func alive(net.Conn) bool { return true }
