package sup

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// Result.JSON builds the library's result text from the Result's fields:
// byte for byte what sup_result would have built.
func TestResultJSONIsTheLibrarys(t *testing.T) {
	long := &Cmd{Args: []string{"sh", "-c", `printf 'h\303\251ad'; head -c 5000 /dev/zero | tr '\0' 'x'; printf '\303\251\377tail\n'`}, MaxOutput: 101}
	idle := &Cmd{Args: []string{"sh", "-c", "echo started; exec sleep 30"}, IdleTimeout: 100 * time.Millisecond, Grace: 100 * time.Millisecond}
	for name, c := range map[string]*Cmd{
		"escapes":  {Args: []string{"sh", "-c", `printf 'a"b\\c\001\177\377\303\251 \t\r\f\b\n\342\202'; printf 'err\355\240\200' >&2; exit 3`}},
		"long":     long,
		"idle":     idle,
		"signal":   {Args: []string{"sh", "-c", "kill -USR1 $$"}},
		"rtsig":    {Args: []string{"sh", "-c", "kill -36 $$"}},
		"rtmax":    {Args: []string{"sh", "-c", "kill -63 $$"}},
		"auto":     {Args: []string{"sh", "-c", "setsid sleep 2 >/dev/null 2>&1 & echo started"}, Contain: ContainAuto},
		"fallback": {Args: []string{"echo", "x"}, Contain: ContainAuto, CgroupParent: "/sup-go-test/no/such/cgroup"},
		"pty":      {Args: []string{"sh", "-c", "echo on a terminal"}, PTY: &PTY{}},
		"merged":   {Args: []string{"sh", "-c", "echo a; echo b >&2"}, combined: true},
		"null":     {Args: []string{"sh", "-c", "echo a; echo b >&2"}, Stdout: io.Discard},
		"first":    {Args: []string{"sleep", "30"}, FirstOutputTimeout: 100 * time.Millisecond, Grace: 100 * time.Millisecond},
		"empty":    {Args: []string{"true"}, MaxOutput: -1},
	} {
		p, err := c.Start(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, _ := p.Wait(context.Background())
		if res == nil {
			t.Fatalf("%s: no result", name)
		}
		lib, ours := p.libraryJSON(), res.JSON()
		p.Close()
		if !bytes.Equal(lib, ours) {
			t.Errorf("%s:\nlibrary %s\nshim    %s", name, lib, ours)
		}
	}
}
