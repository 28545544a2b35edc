//go:build unix

package h1

import (
	"errors"
	"net"
	"syscall"
)

// alive reports whether nc, idle, is still open and has nothing to read:
// a peek that does not wait. A connection that cannot be looked at this
// way is taken as alive; the request on it is then sent again if it
// fails (see RoundTrip).
func alive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = errors.Is(err, syscall.EAGAIN) // nothing to read, and no EOF
		return true
	})
	return err == nil && ok
}
