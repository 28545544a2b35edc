package proxy

import (
	"net/http"
	"testing"
	"time"
)

func TestGRPCTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"1H": time.Hour, "2M": 2 * time.Minute, "3S": 3 * time.Second, "300m": 300 * time.Millisecond,
		"5u": 5 * time.Microsecond, "99999999n": 99999999, "0m": 0,
	} {
		if d, ok := grpcTimeout(v); !ok || d != want {
			t.Errorf("grpcTimeout(%q) = %v, %v; want %v", v, d, ok, want)
		}
	}
	for _, v := range []string{"", "m", "100", "1s", "123456789m", "-1m", "+1m", "1.5S", " 1S"} {
		if d, ok := grpcTimeout(v); ok {
			t.Errorf("grpcTimeout(%q) = %v, want it refused", v, d)
		}
	}
}

func TestGRPCMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"bad gateway": "bad gateway",
		"100% done":   "100%25 done",
		"a\nb":        "a%0Ab",
		"é":           "%C3%A9",
	} {
		if got := grpcMessage(msg); got != want {
			t.Errorf("grpcMessage(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestIsGRPC(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/grpc": true, "application/grpc+proto": true, "application/grpc;charset=utf-8": true,
		"application/grpc-web": false, "application/grpcx": false, "application/json": false, "": false,
	} {
		r := &http.Request{Header: http.Header{"Content-Type": {ct}}}
		if isGRPC(r) != want {
			t.Errorf("isGRPC(%q) = %v, want %v", ct, !want, want)
		}
	}
}
