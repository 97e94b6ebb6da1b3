package sup_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// TestHostDeath: a host killed with SIGKILL takes its tree along, whatever
// the link. With -tags sup_static no sup-sentinel is found, and the host
// (this test binary, run again) runs itself as the sentinel
// (lib/sentinel_entry.hpp). The sleep is the shell's child, not the host's:
// PR_SET_PDEATHSIG, which ties a main process to the host without a
// sentinel, never reaches it.
func TestHostDeath(t *testing.T) {
	for _, contain := range []string{"group", "cgroup"} {
		t.Run(contain, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=host", "SUP_GO_TEST_MODE="+contain)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(out)
			pid := 0
			for pid == 0 && lines.Scan() {
				line := lines.Text()
				if why, ok := strings.CutPrefix(line, "skip "); ok {
					cmd.Wait()
					t.Skipf("no %s containment here: %s", contain, why)
				}
				if tree, ok := strings.CutPrefix(line, "host_death "); ok && tree != string(sup.HostDeathTree) {
					t.Errorf("the result says %q dies with the host", tree)
				}
				if n, ok := strings.CutPrefix(line, "pid "); ok {
					pid, _ = strconv.Atoi(n)
				}
			}
			if pid <= 0 || !running(pid) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the host started no sleep (%q)", lines.Text())
			}
			cmd.Process.Kill() // SIGKILL
			cmd.Wait()
			killed := time.Now()
			for running(pid) && time.Since(killed) < 5*time.Second {
				time.Sleep(10 * time.Millisecond)
			}
			if running(pid) {
				t.Fatalf("sleep %d outlived its host by 5 s", pid)
			}
			t.Logf("sleep ended %v after its host", time.Since(killed).Round(time.Millisecond))
		})
	}
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
	c = sup.Command("sh", "-c", "sleep 60 & echo $!; wait")
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
	fmt.Print("pid ", line)
	select {}
}
