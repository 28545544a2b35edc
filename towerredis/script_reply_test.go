package towerredis

// In-package: it checks rateReply, which is unexported.

import "testing"

// A reply is the script's only if it is three integers, grants between 0
// and the tokens asked, and, refusing, says the next token is in the
// future; anything else is a bad reply, which never grants.
func TestScriptReply(t *testing.T) {
	for _, tt := range []struct {
		reply any
		want  int
		ok    bool
	}{
		{[]any{int64(1), int64(-5), int64(9)}, 1, true},
		{[]any{int64(3), int64(0), int64(9)}, 3, true},
		{[]any{int64(4), int64(0), int64(9)}, 3, false}, // more than asked
		{[]any{int64(0), int64(1), int64(9)}, 3, true},  // refused, next token in 1µs
		{[]any{int64(0), int64(0), int64(9)}, 3, false}, // refused, next token now: would spin
		{[]any{int64(0), int64(-1), int64(9)}, 1, false},
		{[]any{int64(-1), int64(5), int64(9)}, 1, false},
		{[]any{int64(0), int64(0), int64(9)}, -1, true}, // given back
		{[]any{int64(1), int64(0), int64(9)}, -1, false},
		{[]any{int64(1), int64(0)}, 1, false},
		{[]any{int64(1), int64(0), int64(9), int64(9)}, 1, false},
		{[]any{int64(1), "0", int64(9)}, 1, false},
		{"bad key: WRONGTYPE", 1, false},
		{int64(1), 1, false},
		{nil, 1, false},
	} {
		if _, ok := rateReply(tt.reply, tt.want); ok != tt.ok {
			t.Errorf("rateReply(%#v, %d) ok = %v, want %v", tt.reply, tt.want, ok, tt.ok)
		}
	}
}
