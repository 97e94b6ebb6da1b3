package sup_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// TestHostDeath: a host killed with SIGKILL takes its tree along, whatever
// the link. With -tags sup_static (libsup.a inside the binary) no
// sup-sentinel is found, and the host (this test binary, run again) runs
// itself as the sentinel (lib/sentinel_entry.hpp).
func TestHostDeath(t *testing.T) {
	for _, contain := range []string{"group", "cgroup"} {
		t.Run(contain, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=host", "SUP_GO_TEST_MODE="+contain)
			killHost(t, cmd, contain, linkMode)
		})
	}
}

// TestHostDeathBundled: the same with a program built as a user's is with
// -tags sup_bundled (testdata/bundledhost): libsup compiled from lib/ into
// it, no libsup.so, no sup-sentinel beside it, so the program must run
// itself as the sentinel. The build is go's own, with no CGO_* or
// PKG_CONFIG_PATH of the caller's (as the README's bundled recipe; it
// shares that recipe's build cache), but for CGO_CPPFLAGS naming a digest
// of lib/ and include/: go's cache keys a cgo package on the files of its
// own directory, not on what they include, and would otherwise hand back a
// libsup compiled before the last edit of lib/. -short skips it (a first
// build compiles libsup: minutes on a loaded machine).
func TestHostDeathBundled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no bundled build")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the bundled host with")
	}
	bin := filepath.Join(t.TempDir(), "bundledhost")
	build := exec.Command(gobin, "build", "-tags", "sup_bundled", "-o", bin, "./testdata/bundledhost")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "CGO_LDFLAGS" && k != "CGO_CFLAGS" && k != "CGO_CPPFLAGS" && k != "PKG_CONFIG_PATH" && k != "GOFLAGS" {
			build.Env = append(build.Env, kv)
		}
	}
	build.Env = append(build.Env, "CGO_CPPFLAGS=-DSUP_SOURCES_DIGEST="+sourcesDigest(t))
	t0 := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags sup_bundled: %v\n%s", err, out)
	}
	t.Logf("bundled host built in %v", time.Since(t0).Round(time.Millisecond))
	for _, contain := range []string{"group", "cgroup"} {
		t.Run(contain, func(t *testing.T) {
			killHost(t, exec.Command(bin, contain), contain, "bundled")
		})
	}
}

// sourcesDigest: a hash of lib/ and include/, which the bundled build
// compiles through bundled_*.cpp.
func sourcesDigest(t *testing.T) string {
	files, _ := filepath.Glob("../../lib/*")
	files = append(files, "../../include/sup.h")
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("the bundled build's sources: %v", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// killHost starts cmd, a host that prints what its results say dies with
// it ("host_death tree") and the pids of a supervised shell and of the
// shell's sleep ("pids SHELL SLEEP"), checks that it maps libsup.so only
// when link is "shared" (so that a build falling back to the shared library
// cannot pass for a static one), kills it with SIGKILL and waits up to 5 s
// for both to go. The sleep is the shell's child, not the host's:
// PR_SET_PDEATHSIG, which ties a main process to the host without a
// sentinel, never reaches it; only the sentinel ends it.
func killHost(t *testing.T, cmd *exec.Cmd, contain, link string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	shell, pid := 0, 0
	for pid == 0 && lines.Scan() {
		line := lines.Text()
		if why, ok := strings.CutPrefix(line, "skip "); ok {
			cmd.Wait()
			t.Skipf("no %s containment here: %s", contain, why)
		}
		if tree, ok := strings.CutPrefix(line, "host_death "); ok && tree != string(sup.HostDeathTree) {
			t.Errorf("the result says %q dies with the host", tree)
		}
		if n, ok := strings.CutPrefix(line, "pids "); ok {
			f := strings.Fields(n)
			if len(f) == 2 {
				shell, _ = strconv.Atoi(f[0])
				pid, _ = strconv.Atoi(f[1])
			}
		}
	}
	if pid <= 0 || shell <= 0 || !running(pid) || !running(shell) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the host started no shell and sleep (%q)", lines.Text())
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if shared := strings.Contains(string(maps), "/libsup.so"); shared != (link == "shared") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("a %s build whose host maps libsup.so: %v", link, shared)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	killed := time.Now()
	for (running(pid) || running(shell)) && time.Since(killed) < 5*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if running(shell) || running(pid) {
		t.Fatalf("shell %d (running: %v) or its sleep %d (running: %v) outlived its host (%s build) by 5 s",
			shell, running(shell), pid, running(pid), link)
	}
	t.Logf("%s build: shell and sleep ended %v after their host", link, time.Since(killed).Round(time.Millisecond))
}

// TestRequireSentinel: where a sentinel runs, as in every build the tests
// use, RequireSentinel starts the child and the result says so; the spec
// key reaches the library (an unknown key would be refused).
func TestRequireSentinel(t *testing.T) {
	c := sup.Command("true")
	c.RequireSentinel = true
	res := run(t, c)
	if res.HostDeath != sup.HostDeathTree {
		t.Fatalf("HostDeath %q", res.HostDeath)
	}
}

// running: alive, and not a zombie waiting for whoever adopted it.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndex(s, ") ")
	return i >= 0 && !strings.HasPrefix(s[i+2:], "Z")
}

// hostForDeath is TestHostDeath's host: it prints what its results say dies
// with it, then the pid of a sleep in a supervised tree, and waits to be
// killed.
func hostForDeath() {
	how := sup.ContainGroup
	if os.Getenv("SUP_GO_TEST_MODE") == "cgroup" {
		how = sup.ContainCgroup
	}
	c := sup.Command("true")
	c.Contain = how
	res, err := c.Run(context.Background())
	if errors.Is(err, syscall.ENOTSUP) {
		fmt.Println("skip", err)
		os.Exit(0)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("host_death", res.HostDeath)
	c = sup.Command("sh", "-c", "sleep 60 & echo $$ $!; wait")
	c.Contain = how
	p, err := c.Start(context.Background())
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Print("pids ", line)
	select {}
}
