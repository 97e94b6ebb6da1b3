package sup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// A child that waits for input nobody gives is seen, and ended by
// InputWaitTimeout.
func TestInputWantedAndInputWaitTimeout(t *testing.T) {
	c := sup.Command("cat")
	w, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := start(t, context.Background(), c)
	defer p.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		wanted, err := p.InputWanted()
		if err != nil {
			t.Fatalf("InputWanted: %v", err)
		}
		if wanted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("cat reading an empty pipe is never seen waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res := wait(t, p)
	if res.Outcome != sup.Exited {
		t.Fatalf("after EOF: %v", res)
	}
	if _, err := p.InputWanted(); !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, os.ErrClosed) {
		t.Fatalf("InputWanted once final: %v", err)
	}

	c = sup.Command("sh", "-c", "echo asking; read answer")
	c.Stdin, _ = c.StdinPipe()
	c.InputWaitTimeout = 300 * time.Millisecond
	c.Grace = time.Second
	t0 := time.Now()
	res, err = c.Run(context.Background())
	if res == nil || res.Outcome != sup.IdleTimeout || res.Phase != sup.PhaseInput || res.WaitingForInput == nil || !*res.WaitingForInput {
		t.Fatalf("input wait: %v %v", res, err)
	}
	t.Logf("input wait timeout of 300ms ended after %v", time.Since(t0))
}

// Limits: a file size limit ends a writer with SIGXFSZ, named in Limit.
func TestLimitsFileBytes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "big")
	c := sup.Command("sh", "-c", "exec head -c 100000 /dev/zero > "+out)
	c.Limits = &sup.Limits{FileBytes: 4096, NoCoreDump: true}
	res, err := c.Run(context.Background())
	if res == nil {
		t.Fatalf("run: %v", err)
	}
	if res.Signal != syscall.SIGXFSZ || res.Limit != "file_size" {
		t.Fatalf("not ended by the limit: %v, limit %q", res, res.Limit)
	}
	if st, _ := os.Stat(out); st == nil || st.Size() > 4096 {
		t.Fatalf("file not limited: %v", st)
	}
	if !strings.Contains(string(res.Confined), `"file_bytes"`) || !strings.Contains(string(res.JSON()), `"confined": {`) {
		t.Fatalf("confined %s", res.Confined)
	}
	conf, err := res.Confinement()
	if err != nil || conf.FileBytes == nil || conf.FileBytes.Value != 4096 || conf.FileBytes.Mechanism != "rlimit" ||
		conf.FileBytes.Scope != "process" || conf.CoreDump == nil || conf.CoreDump.Value != 0 || conf.CPUSeconds != nil || conf.Sandbox != nil {
		t.Fatalf("Confinement: %+v %v from %s", conf, err, res.Confined)
	}
	_, err = sup.Command("true").Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.Limits = &sup.Limits{OpenFiles: -1}
	_, err = c.Run(context.Background())
	var se *sup.Error
	if !errors.As(err, &se) || !strings.Contains(se.Detail, "limits.open_files") {
		t.Fatalf("negative limit: %v", err)
	}
}

// Limits: a CPU limit of 1 s ends a spinner (SIGXCPU, or SIGKILL a second
// later), named in Limit.
func TestLimitsCPUSeconds(t *testing.T) {
	c := sup.Command("sh", "-c", "while :; do :; done")
	c.Limits = &sup.Limits{CPUSeconds: 1}
	c.MaxRuntime = 2 * time.Minute
	t0 := time.Now()
	res, err := c.Run(context.Background())
	if res == nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("cpu_seconds 1 ended the spinner after %v: %v", time.Since(t0), res)
	if (res.Signal != syscall.SIGXCPU && res.Signal != syscall.SIGKILL) || res.Limit != "cpu" || res.Outcome != sup.Signaled {
		t.Fatalf("not ended by the limit: %v, limit %q", res, res.Limit)
	}
	conf, err := res.Confinement()
	if err != nil || conf.CPUSeconds == nil || conf.CPUSeconds.Value != 1 || conf.CPUSeconds.Mechanism != "rlimit" || conf.User != nil {
		t.Fatalf("Confinement: %+v %v from %s", conf, err, res.Confined)
	}
	plain, _ := sup.Command("true").Run(context.Background())
	if plain.Limit != "" || plain.Confined != nil || plain.WaitingForInput != nil {
		t.Fatalf("nothing asked: %+v", plain)
	}
	if conf, err := plain.Confinement(); conf != nil || err != nil {
		t.Fatalf("Confinement with nothing: %v %v", conf, err)
	}
}

// Credential runs the child as another user (a privileged host only).
func TestCredential(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	c := sup.Command("id")
	c.Credential = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{65534}}
	out, err := c.Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); len(got) < 3 || !strings.HasPrefix(got[0], "uid=65534") || !strings.HasPrefix(got[1], "gid=65534") || !strings.HasPrefix(got[2], "groups=65534") {
		t.Fatalf("id: %q", out)
	}
}

// Sandbox: nothing writable but the Write paths, where the kernel has
// Landlock; the result says what was applied.
func TestSandboxWrite(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	c := sup.Command("sh", "-c", "echo ok > "+dir+"/a; echo no > "+other+"/b")
	c.Sandbox = &sup.Sandbox{Write: []string{dir}}
	res, err := c.Run(context.Background())
	if res == nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(string(res.Confined), `"sandbox"`) {
		t.Fatalf("confined %s", res.Confined)
	}
	conf, err := res.Confinement()
	if err != nil || conf.Sandbox == nil || !conf.Sandbox.NoNewPrivs || conf.Sandbox.Network != nil ||
		conf.Sandbox.Filesystem != (conf.Sandbox.LandlockABI > 0) || conf.MemoryBytes != nil {
		t.Fatalf("Confinement: %+v %v from %s", conf, err, res.Confined)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Fatalf("the Write path is not writable: %v", err)
	}
	if strings.Contains(string(res.Confined), `"landlock_abi": 0`) {
		t.Skipf("no Landlock here: %s", res.Confined)
	}
	if _, err := os.Stat(filepath.Join(other, "b")); err == nil {
		t.Fatalf("written outside the sandbox: %s", res.Confined)
	}
}
