package sup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

func TestContain(t *testing.T) {
	c := sup.Command("sh", "-c", "setsid sleep 2 >/dev/null 2>&1 & echo started")
	c.Contain = sup.ContainAuto
	t0 := time.Now()
	res := run(t, c)
	t.Logf("ContainAuto: %s (fallback %q), leftovers ended %d, tree CPU %v+%v (known %v), in %v",
		res.Contained, res.ContainFallback, res.LeftoversEnded, res.TreeUserTime, res.TreeSystemTime, res.TreeCPUKnown, time.Since(t0))
	switch res.Contained {
	case sup.ContainCgroup:
		if res.LeftoversEnded < 1 || !res.TreeCPUKnown || res.ContainFallback != "" {
			t.Fatalf("cgroup: %+v", res)
		}
	case sup.ContainGroup:
		if res.ContainFallback == "" || res.LeftoversEnded != -1 || res.TreeCPUKnown {
			t.Fatalf("fell back without saying why: %+v", res)
		}
	default:
		t.Fatalf("contained %q", res.Contained)
	}
	// A parent that cannot hold it: ContainAuto says why it fell back.
	c.CgroupParent = "/sup-go-test/no/such/cgroup"
	res = run(t, c)
	if res.Contained != sup.ContainGroup || res.ContainFallback == "" || res.LeftoversEnded != -1 || res.TreeCPUKnown {
		t.Fatalf("fallback: %q %q %d %v", res.Contained, res.ContainFallback, res.LeftoversEnded, res.TreeCPUKnown)
	}
	t.Logf("fallback: %s", res.ContainFallback)
	c.CgroupParent = ""

	c.Contain = sup.ContainCgroup
	res, err := c.Run(context.Background())
	if res == nil && !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("ContainCgroup: %v", err)
	}
	if res != nil && res.Contained != sup.ContainCgroup {
		t.Fatalf("ContainCgroup gave %q", res.Contained)
	}
	if res := run(t, sup.Command("true")); res.Contained != sup.ContainGroup || res.LeftoversEnded != -1 {
		t.Fatalf("default: %q %d", res.Contained, res.LeftoversEnded)
	}
	c.Contain = "nonsense"
	var se *sup.Error
	if _, err := c.Run(context.Background()); !errors.As(err, &se) || se.Part != sup.PartSpec || !strings.Contains(se.Detail, "contain") {
		t.Fatalf("bad Contain: %v", err)
	}
}
