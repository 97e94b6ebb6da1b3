// Command bundledhost is TestHostDeathBundled's host, built with
// -tags sup_bundled: it prints what its results say dies with it, then the
// pids of a supervised shell and of the shell's sleep, and waits to be
// killed. Its one argument is the containment: "group" or "cgroup".
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	sup "github.com/sup-project/sup/shims/go"
)

func main() {
	how := sup.ContainGroup
	if len(os.Args) > 1 && os.Args[1] == "cgroup" {
		how = sup.ContainCgroup
	}
	c := sup.Command("true")
	c.Contain = how
	c.RequireSentinel = true
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
